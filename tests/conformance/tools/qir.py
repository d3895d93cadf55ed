"""A tiny builder for QIR text programs (the syntax of backend-abi/src/qir/text)."""


def ty(dtype, shape):
    return f"{dtype}[{','.join(str(d) for d in shape)}]"


def lst(xs):
    return "[" + ",".join(str(x) for x in xs) + "]"


class Program:
    """Builds `head(%0: t, ...) { ... return ... }`; values are numbered in definition order."""

    def __init__(self, *input_types, head="program"):
        self.head = head
        self.inputs = list(input_types)
        self.lines = []
        self.next = len(self.inputs)
        self.ops = set()
        self.dtypes = {t.split("[")[0] for t in input_types}
        self.text = None

    def arg(self, i):
        return f"%{i}"

    def op(self, name, operands, results, attrs=None, regions=None):
        """Appends a node; returns its result names (a str when there is one result)."""
        if isinstance(results, str):
            results = [results]
        names = [f"%{self.next + i}" for i in range(len(results))]
        self.next += len(results)
        self.ops.add(name)
        for r in results:
            self.dtypes.add(r.split("[")[0])
        attr = ""
        if attrs:
            attr = "[" + ", ".join(f"{k}={v}" for k, v in attrs) + "]"
        lhs = ", ".join(names) if names else "()"
        line = f"{lhs} = {name}{attr}({', '.join(operands)}) : {', '.join(results) if results else '()'}"
        if regions:
            body = []
            for r in regions:
                self.ops |= r.ops
                self.dtypes |= r.dtypes
                body.append(r.render(1))
            line += " {\n" + "".join(body) + "  }"
        self.lines.append(line)
        return names[0] if len(names) == 1 else names

    def render(self, indent):
        pad = "  " * indent
        params = ", ".join(f"%{i}: {t}" for i, t in enumerate(self.inputs))
        out = f"{pad}{self.head}({params}) {{\n"
        for line in self.lines:
            out += "".join(f"{pad}  {l}\n" for l in line.split("\n"))
        out += f"{pad}  return {', '.join(self.outputs)}\n{pad}}}\n"
        return out

    def ret(self, *outputs):
        self.outputs = list(outputs)
        self.text = self.render(0)
        return self


def region(head, *input_types):
    return Program(*input_types, head=head)
