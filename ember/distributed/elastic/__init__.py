"""ember.distributed.elastic: what torch.distributed.elastic's workers touch (the error recording of
`multiprocessing.errors`); the agent's part is the launcher, `ember.distributed.run`."""
