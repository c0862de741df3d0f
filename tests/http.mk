# tests of the http area
