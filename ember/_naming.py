"""The one switch deciding whether the names ember prints say `ember` or `torch`.

NOTE [ One switch for printed names ]
A torch script run by `ember run` prints and compares the names torch gives its objects: `torch.float32`,
`torch.Size([2])`, `'torch.FloatTensor'`, `<class 'torch.nn.modules.linear.Linear'>`, "torch.load" in an
error message. With a plain `import ember` those names say `ember`. Every place that prints the package's
name reads `prefix` here when it prints (reprs, `Tensor.type()`, messages through `named`), and classes
carry it in `__module__`, which the torch alias rewrites when it sets the switch
(`_torch_alias.install`, NOTE [ The torch alias ]). Nothing else may hard-code "ember." in a string a
user sees.
"""

import re

prefix = "ember"

_EMBER_DOT = re.compile(r"\bember\.(?=[A-Za-z_])")


def named(text):
    """`text` with every `ember.<name>` spelled with the current prefix ("torch.load" under the alias)."""
    return text if prefix == "ember" else _EMBER_DOT.sub(prefix + ".", text)


def module(name):
    """A module path ("ember.autograd.graph") under the current prefix, for classes made at run time."""
    return prefix + name[len("ember"):] if name == "ember" or name.startswith("ember.") else name
