"""The stencil dialect (Open Earth / MLIR): programs of fields, temps and applies, their passes, and their
lowering to polylab's polyhedral model."""
