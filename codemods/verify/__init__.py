"""`xla-codemod verify`: run a port next to the original and check it."""
