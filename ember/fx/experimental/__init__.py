"""ember.fx.experimental: dispatch-level tracing (`proxy_tensor.make_fx`)."""
