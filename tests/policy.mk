# tests of the policy area
