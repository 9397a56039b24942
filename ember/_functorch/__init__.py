"""ember._functorch: AOT autograd (`aot_autograd`) and its partitioners (`partitioners`), as torch's."""
