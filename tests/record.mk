# tests of the record area
