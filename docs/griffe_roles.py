"""A griffe extension for the reference site: the docstrings' Sphinx roles as code.

nnsweeper's docstrings are numpydoc, with Sphinx roles (``:func:`analyze```,
``:class:`~nnsweeper.observation.Observation```) that mkdocstrings would print as they
are; this writes each as inline code of its target (the last part after ``~``), the way
Sphinx shows them, before the docstring is parsed.
"""

from __future__ import annotations

import re

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|data|mod|exc|obj|const):`(~?)([^`]+)`")


def _code(match: re.Match) -> str:
    tilde, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"


class SphinxRoles(griffe.Extension):
    """Replace Sphinx roles by inline code in every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(_code, obj.docstring.value)
