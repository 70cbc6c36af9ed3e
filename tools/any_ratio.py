"""How many of novalite's annotated parameters are ``Any``: the figure issue 21 bounds.

Counts every parameter with an annotation in ``novalite/`` (migrations left out), and
among them those annotated ``Any`` itself and those with ``Any`` anywhere inside
(``dict[str, Any]``). ``python tools/any_ratio.py [-v]``; ``-v`` lists the files with
most.
"""
from __future__ import annotations

import ast
import pathlib
import sys
from collections import Counter
from dataclasses import dataclass, field

ROOT = pathlib.Path(__file__).resolve().parent.parent / 'novalite'


@dataclass
class Tally:
    annotated: int = 0
    bare_any: int = 0
    any_inside: int = 0
    by_file: Counter[str] = field(default_factory=Counter)

    @property
    def bare_share(self) -> float:
        return self.bare_any / self.annotated if self.annotated else 0.0

    @property
    def inside_share(self) -> float:
        return self.any_inside / self.annotated if self.annotated else 0.0


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    args = node.args
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]


def tally(root: pathlib.Path = ROOT) -> Tally:
    result = Tally()
    for path in sorted(root.rglob('*.py')):
        if 'migrations' in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for arg in _parameters(node):
                if arg.annotation is None:
                    continue
                result.annotated += 1
                text = ast.unparse(arg.annotation)
                if text in ('Any', 'typing.Any'):
                    result.bare_any += 1
                    result.by_file[str(path.relative_to(root.parent))] += 1
                if 'Any' in text:
                    result.any_inside += 1
    return result


def main() -> None:
    t = tally()
    print('annotated parameters: %d; Any: %d (%.1f %%); Any anywhere in the annotation: '
          '%d (%.1f %%)' % (t.annotated, t.bare_any, 100 * t.bare_share, t.any_inside,
                            100 * t.inside_share))
    if '-v' in sys.argv[1:]:
        for path, count in t.by_file.most_common(30):
            print('%5d  %s' % (count, path))


if __name__ == '__main__':
    main()
