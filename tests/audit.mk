# tests of the audit area
