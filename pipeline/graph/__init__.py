"""The compact scenario graph: CSR transitions and the path samplers over it."""
