# tests of the wire area
