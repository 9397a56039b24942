"""ember.fx.passes: graph passes (shape propagation, Graphviz drawing), as torch.fx.passes."""
