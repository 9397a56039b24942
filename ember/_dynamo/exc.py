"""The exceptions of capture: a graph break (`Unsupported`) and the errors torch raises around it."""


class TorchDynamoException(RuntimeError):
    pass


class Unsupported(TorchDynamoException):
    """Capture met something it cannot put in a graph: a graph break (an error under fullgraph=True)."""

    def __init__(self, msg, *, user_line=None):
        super().__init__(msg)
        self.msg = msg
        self.user_line = user_line  # "file:line in fn" of the user's instruction, filled by the interpreter


class UserError(Unsupported):
    pass


class RecompileError(TorchDynamoException):
    pass


class BackendCompilerFailed(TorchDynamoException):
    def __init__(self, backend_name, inner):
        super().__init__(
            f"backend={backend_name!r} raised:\n{type(inner).__name__}: {inner}\n\n"
            "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if you're "
            'reporting a bug to PyTorch). For even more developer context, set TORCH_LOGS="+dynamo"\n'
        )
        self.backend_name = backend_name
        self.inner_exception = inner


class FailOnRecompileLimitHit(TorchDynamoException):
    pass
