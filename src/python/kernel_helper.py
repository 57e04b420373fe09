"""What runs inside the tool's embedded interpreter for --kernel-py (docs/python.md): loading a
submission, calling its function, checking what it returns, and one-line descriptions of
exceptions with the submission's file:line. src/python/python_kernels.cpp embeds this file at build
time (CMake) and runs it as the module _nvfp4bench_python; tests/unit/kernel_helper_test.py imports
it directly.
"""
import importlib.util, os, re, sys, traceback

sys.stdout = sys.stderr  # the tool's stdout may carry a report (--output -)
_modules = {}
_SELF = globals().get("__file__")  # None in the tool, which runs this text as "<string>"


class WrongReturn(Exception):
    pass


def _defined_at(fn):
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else None


def where(exc, path, fn=None):
    """The deepest line of the submission's own file in the traceback; never this helper's own
    lines (they are "<string>" in the tool). When no line of the submission ran, the call itself
    failed (a wrong signature, say): then where the function is defined, and how it is called."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if os.path.abspath(f.filename) == path]
    if mine:
        return f"{mine[-1].filename}:{mine[-1].lineno}"
    if fn is not None:
        at = _defined_at(fn)
        name = getattr(fn, "__name__", "the function")
        how = f"it is called as {name}(data), data the input tuple"
        return f"{at}, the function's definition: the call itself failed; {how}" if at else how
    others = [f for f in frames if f.filename not in ("<string>", _SELF)]
    return f"{others[-1].filename}:{others[-1].lineno}" if others else path


def describe(exc, path, fn=None):
    t = type(exc)
    name = t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
    msg = " ".join(str(exc).split())
    return f"{name}{': ' + msg if msg else ''} (at {where(exc, path, fn)})"


def describe_call(exc, path, fn=None):
    return str(exc) if isinstance(exc, WrongReturn) else "raised " + describe(exc, path, fn)


def load(path):
    mod = _modules.get(path)
    if mod is not None:
        return mod
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # as if run as a script: helper modules beside it import
    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem if stem.isidentifier() and stem not in sys.modules else f"_nvfp4bench_py_{len(_modules)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError("cannot be imported as a Python module (not a .py file?)")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        sys.stderr.flush()
    _modules[path] = mod
    return mod


def function(mod, func):
    fn = getattr(mod, func, None)
    if fn is None:
        have = sorted(n for n, v in vars(mod).items()
                      if callable(v) and not n.startswith("_") and getattr(v, "__module__", None) == mod.__name__)
        raise LookupError(f"has no function '{func}' (it defines: {', '.join(have) or 'none'})")
    if not callable(fn):
        raise LookupError(f"defines '{func}' as {_a(type(fn).__name__)} ({_short(fn)}), not a function "
                          f"(expected def {func}(data): ...)")
    return fn


def _a(kind):
    return ("an " if kind[:1].lower() in "aeiou" else "a ") + kind


def _short(value):
    text = " ".join(repr(value).split())
    return text if len(text) <= 40 else text[:37] + "..."


# Errors that mean "this GPU (or this machine) cannot do what the submission asks", not a bug in
# it: NotImplementedError, and messages such as torch's CUBLAS_STATUS_NOT_SUPPORTED for FP4
# _scaled_mm on Hopper or "no kernel image is available".
_UNSUPPORTED = re.compile(r"NOT_SUPPORTED|not (yet )?supported|unsupported|only supported|"
                          r"no kernel image is available|requires? (a )?(GPU|device|CUDA|"
                          r"compute capability|sm_?[0-9]+)", re.IGNORECASE)


def unsupported(exc):
    return isinstance(exc, NotImplementedError) or (
        not isinstance(exc, WrongReturn) and bool(_UNSUPPORTED.search(str(exc))))


def torch_status():
    """'' when torch with CUDA is importable, else why not."""
    try:
        import torch
    except Exception as e:
        return f"cannot import torch ({type(e).__name__}: {' '.join(str(e).split())})"
    if not torch.cuda.is_available():
        return f"its torch {torch.__version__} has no CUDA (torch.cuda.is_available() is False)"
    return ""


class _CudaMemory:
    """The tool's device memory as __cuda_array_interface__: torch wraps it without a copy."""

    def __init__(self, ptr, shape, strides, typestr, itemsize):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "strides": tuple(s * itemsize for s in strides),
            "typestr": typestr, "data": (ptr, False), "version": 3, "stream": None}


# Element kinds of the tuple (the C++ side lays it out): the contest's torch dtype where this
# torch has it, else uint8; the buffer's typestr and bytes per element.
_KINDS = {"fp4x2": ("float4_e2m1fn_x2", "|u1", 1), "e4m3": ("float8_e4m3fn", "|u1", 1),
          "f16": ("float16", "<f2", 2)}


def cuda_tensors(views, device):
    """(ptr, shape, strides in elements, kind) for each element -> torch CUDA tensors."""
    import torch
    dev = torch.device("cuda", device)
    out = []
    for ptr, shape, strides, kind in views:
        name, typestr, size = _KINDS[kind]
        t = torch.as_tensor(_CudaMemory(ptr, shape, strides, typestr, size), device=dev)
        dtype = getattr(torch, name, None)
        out.append(t.view(dtype) if dtype is not None and dtype != t.dtype else t)
    return tuple(out)


def _returned(fn, c, out, as_array, where=""):
    """What the function returned, as an array of c's shape and dtype, or WrongReturn saying
    what it was instead. as_array(out) gives the array, or a reason it is none."""
    code = getattr(fn, "__code__", None)
    want = f"c as float16 [M, N, L] = {tuple(c.shape)}" + (f" {where}" if where else "")
    if code is not None:
        want += f" (the function is at {code.co_filename}:{code.co_firstlineno})"
    if out is None:
        raise WrongReturn(f"returned None; expected {want}")
    arr, why = as_array(out)
    if arr is None:
        raise WrongReturn(f"returned {_a(type(out).__name__)}, {why}; expected {want}")
    if tuple(arr.shape) != tuple(c.shape):
        raise WrongReturn(f"returned shape {tuple(arr.shape)}; expected {want}")
    if arr.dtype != c.dtype:
        raise WrongReturn(f"returned dtype {str(arr.dtype).replace('torch.', '')}; expected {want}")
    return arr, want


def _call(fn, data):
    try:
        return fn(data)
    finally:
        sys.stderr.flush()


_streams = {}


def call_cuda(fn, data, c, stream, device):
    """The call on the tool's stream (torch's external-stream support): everything the
    submission enqueues through torch is ordered with the tool's events and flushes."""
    import torch
    s = _streams.get(stream)
    if s is None:
        s = _streams[stream] = torch.cuda.ExternalStream(stream, device=torch.device("cuda", device))
    with torch.cuda.stream(s):
        out = _call(fn, data)
        if out is c:
            return
        tensor = lambda o: (o, "") if isinstance(o, torch.Tensor) else (None, "not a torch.Tensor")
        arr, want = _returned(fn, c, out, tensor, f"on {c.device}")
        if arr.device != c.device:
            raise WrongReturn(f"returned a tensor on {arr.device}; expected {want}")
        c.copy_(arr)


def call(fn, data, c):
    import numpy as np
    out = _call(fn, data)
    if out is c:
        return

    def array(o):
        # An array, or what numpy takes as one (a buffer, nested lists); a str, a generator, a
        # number or any other object would become a 0-d object or string array.
        if not isinstance(o, (np.ndarray, list, tuple)) and not any(
                hasattr(o, a) for a in ("__array__", "__array_interface__", "__array_struct__")):
            return None, "not an array"
        try:
            a = np.asarray(o)
        except Exception as e:
            return None, f"not an array ({e})"
        if a.dtype == object:
            return None, "not an array of numbers"
        return a, ""

    np.copyto(c, _returned(fn, c, out, array)[0])
