// --kernel-py: GPU MODE nvfp4_gemm submissions in an embedded CPython (pybind11). The host
// backend hands them numpy views of the tool's own buffers in the contest's shapes and strides;
// the GPU backend is not done yet (docs/python.md).
#include "src/python/python_kernels.hpp"

#include <fmt/format.h>
#include <pybind11/embed.h>
#include <pybind11/numpy.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <tuple>

#include "src/core/error.hpp"
#include "src/device/device_info.hpp"
#include "src/registry/registry.hpp"

namespace py = pybind11;

namespace nvfp4 {
namespace {  // internal linkage: classes holding pybind11 objects stay out of the symbol table

constexpr const char* kDefaultFunction = "custom_kernel";

// What runs inside the interpreter: loading a file, calling its function, checking what it
// returns, and one-line descriptions of exceptions with the submission's file:line.
constexpr const char* kHelper = R"PY(
import importlib.util, os, sys, traceback

sys.stdout = sys.stderr  # the tool's stdout may carry a report (--output -)
_modules = {}


class WrongReturn(Exception):
    pass


def where(exc, path):
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if os.path.abspath(f.filename) == path]
    f = (mine or frames or [None])[-1]
    return f"{f.filename}:{f.lineno}" if f else path


def describe(exc, path):
    t = type(exc)
    name = t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
    msg = " ".join(str(exc).split())
    return f"{name}{': ' + msg if msg else ''} (at {where(exc, path)})"


def describe_call(exc, path):
    return str(exc) if isinstance(exc, WrongReturn) else "raised " + describe(exc, path)


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
        raise LookupError(f"'{func}' is a {type(fn).__name__}, not a function")
    return fn


def call(fn, data, c):
    import numpy as np
    try:
        out = fn(data)
    finally:
        sys.stderr.flush()
    if out is c:
        return
    code = getattr(fn, "__code__", None)
    want = f"c as float16 [M, N, L] = {tuple(c.shape)}"
    if code is not None:
        want += f" (the function is at {code.co_filename}:{code.co_firstlineno})"
    if out is None:
        raise WrongReturn(f"returned None; expected {want}")
    try:
        arr = np.asarray(out)
    except Exception as e:
        raise WrongReturn(f"returned a {type(out).__name__}, not an array ({e}); expected {want}")
    if arr.shape != c.shape:
        raise WrongReturn(f"returned shape {tuple(arr.shape)}; expected {want}")
    if arr.dtype != np.float16:
        raise WrongReturn(f"returned dtype {arr.dtype}; expected {want}")
    np.copyto(c, arr)
)PY";

// The interpreter, started on the first --kernel-py and never finalized: kernels stay callable
// until exit. The GIL is released between calls; every entry point takes it.
py::object& helper() {
  static py::object* h = nullptr;  // leaked on purpose, like the interpreter
  if (!h) {
    py::initialize_interpreter(/*init_signal_handlers=*/false, 0, nullptr,
                               /*add_program_dir_to_path=*/false);
    {
      py::object m = py::module_::import("types").attr("ModuleType")("_nvfp4bench_python");
      py::exec(kHelper, m.attr("__dict__"));
      h = new py::object(std::move(m));
    }
    PyEval_SaveThread();
  }
  return *h;
}

struct Spec {
  std::string file, function;
};

Spec split_spec(const std::string& spec) {
  const size_t colon = spec.rfind(':');
  if (colon != std::string::npos) {
    const std::string tail = spec.substr(colon + 1);
    const bool identifier =
        !tail.empty() && !std::isdigit(static_cast<unsigned char>(tail[0])) &&
        std::all_of(tail.begin(), tail.end(),
                    [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (identifier) return {spec.substr(0, colon), tail};
  }
  return {spec, kDefaultFunction};
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return s;
}

struct Loaded {
  std::string path, function, name;
  PyObject* fn = nullptr;  // a strong reference, never released (the interpreter outlives all)
};

std::vector<std::shared_ptr<Loaded>>& loaded() {
  static std::vector<std::shared_ptr<Loaded>> all;
  return all;
}

// A read-only (or, for c, writable) numpy view of the tool's memory: no copy, and a base object
// that frees nothing.
py::array view(const py::dtype& dt, std::vector<py::ssize_t> shape,
               std::vector<py::ssize_t> strides, const void* p, bool writable) {
  py::capsule base(p, "nvfp4bench buffer");
  py::array a(dt, std::move(shape), std::move(strides), p, base);
  if (!writable) a.attr("setflags")(py::arg("write") = false);
  return a;
}

class PythonGemm final : public Gemm {
 public:
  explicit PythonGemm(std::shared_ptr<const Loaded> k) : k_(std::move(k)) {}
  ~PythonGemm() override {
    if (cache_.empty()) return;
    py::gil_scoped_acquire gil;
    cache_.clear();
  }

  std::string name() const override { return k_->name; }
  std::string description() const override {
    return fmt::format("{}() in {} [Python; host backend: numpy views; times include the Python "
                       "call]", k_->function, k_->path);
  }
  Space space() const override { return Space::Host; }
  int auto_rank() const override { return -1; }  // never picked by --kernel auto
  Availability availability(const DeviceInfo& dev) const override {
    if (dev.has_gpu)
      return {false, "Python kernels (--kernel-py) are not yet supported on the GPU backend; the "
                     "host backend runs them (CUDA_VISIBLE_DEVICES=)"};
    return {true, {}};
  }

  void run(const Shape& s, const Operands& o, void*, cudaStream_t) override {
    py::gil_scoped_acquire gil;
    try {
      const py::tuple& data = inputs(s, o);
      helper().attr("call")(py::handle(k_->fn), data, data[6]);
    } catch (py::error_already_set& e) {
      std::string why;
      try {
        why = py::str(helper().attr("describe_call")(e.value(), k_->path)).cast<std::string>();
      } catch (const std::exception&) {
        why = e.what();
      }
      throw runtime_error(fmt::format("kernel '{}': {} {}", k_->name, k_->function, one_line(why)));
    }
  }

 private:
  // GPU MODE's tuple (a, b, sfa, sfb, sfa_permuted, sfb_permuted, c) over the tool's
  // batch-outermost buffers; kept per operand set, so a repeated call builds nothing.
  const py::tuple& inputs(const Shape& s, const Operands& o) {
    const auto key = std::make_tuple(o.a, o.b, o.sfa, o.sfb, o.sfa_blocked, o.sfb_blocked, o.c,
                                     s.m, s.n, s.k, s.l);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    if (cache_.size() >= 64) cache_.clear();
    const py::dtype u8 = py::dtype::of<uint8_t>();
    const py::ssize_t m = s.m, n = s.n, l = s.l, kh = s.k / 2, kb = s.k / 16;
    const auto packed = [&](const uint8_t* p, py::ssize_t r) {  // [R, K/2, L]
      return view(u8, {r, kh, l}, {kh, 1, r * kh}, p, false);
    };
    const auto scales = [&](const uint8_t* p, py::ssize_t r) {  // [R, K/16, L]
      return view(u8, {r, kb, l}, {kb, 1, r * kb}, p, false);
    };
    const auto blocked = [&](const uint8_t* p, py::ssize_t r) {  // [32, 4, R/128, 4, Kb/4, L]
      const py::ssize_t rt = (r + 127) / 128, kt = (kb + 3) / 4;
      return view(u8, {32, 4, rt, 4, kt, l}, {16, 4, kt * 512, 1, 512, rt * kt * 512}, p, false);
    };
    py::array c = view(py::dtype("float16"), {m, n, l}, {2 * n, 2, 2 * m * n}, o.c, true);
    py::tuple t = py::make_tuple(packed(o.a, m), packed(o.b, n), scales(o.sfa, m),
                                 scales(o.sfb, n), blocked(o.sfa_blocked, m),
                                 blocked(o.sfb_blocked, n), c);
    return cache_.emplace(key, std::move(t)).first->second;
  }

  std::shared_ptr<const Loaded> k_;
  std::map<std::tuple<const void*, const void*, const void*, const void*, const void*,
                      const void*, const void*, int64_t, int64_t, int64_t, int64_t>,
           py::tuple>
      cache_;
};

bool valid_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                  c == '+' || c == ':' || c == '-';
         });
}

}  // namespace

bool python_kernels_built() { return true; }

std::string load_python_kernel(const std::string& arg) {
  namespace fs = std::filesystem;
  const Spec sp = split_spec(arg);
  const auto bad = [&](const std::string& what) {
    return usage_error(fmt::format("--kernel-py {} (function {}): {}", sp.file, sp.function,
                                   one_line(what)));
  };
  std::error_code ec;
  if (!fs::exists(sp.file, ec)) throw bad("no such file");
  if (!fs::is_regular_file(sp.file, ec)) throw bad("not a regular file");
  const std::string abs = fs::weakly_canonical(fs::absolute(sp.file, ec), ec).string();
  for (const auto& l : loaded())
    if (l->path == abs && l->function == sp.function) return l->name;
  std::string name = "py:" + fs::path(abs).stem().string();
  if (sp.function != kDefaultFunction) name += ":" + sp.function;
  if (!valid_name(name))
    throw bad(fmt::format("kernel name '{}': must be 1 to 64 characters from [A-Za-z0-9._+:-]; "
                          "rename the file", name));
  if (gemm_name_taken(name))
    throw bad(fmt::format("kernel name '{}' is already taken (built-in or loaded before); rename "
                          "the file", name));

  auto k = std::make_shared<Loaded>();
  k->path = abs;
  k->function = sp.function;
  k->name = name;
  py::object& h = helper();
  {
    py::gil_scoped_acquire gil;
    try {
      (void)py::module_::import("numpy");
    } catch (py::error_already_set& e) {
      const py::module_ sys = py::module_::import("sys");
      throw bad(fmt::format("the embedded Python {} cannot import numpy ({}): install "
                            "python3-numpy", py::str(sys.attr("version")).cast<std::string>(),
                            e.what()));
    }
    py::object module;
    try {
      module = h.attr("load")(abs);
    } catch (py::error_already_set& e) {
      throw bad("the file does not load: " + py::str(h.attr("describe")(e.value(), abs)).cast<std::string>());
    }
    try {
      k->fn = h.attr("function")(module, sp.function).release().ptr();
    } catch (py::error_already_set& e) {
      throw bad("the file " + py::str(e.value()).cast<std::string>());
    }
  }
  std::shared_ptr<const Loaded> ck = k;
  if (!register_gemm({name, Role::Kernel, [ck]() -> std::unique_ptr<Gemm> {
                        return std::make_unique<PythonGemm>(ck);
                      }}))
    throw bad(fmt::format("kernel name '{}' is already taken", name));
  loaded().push_back(k);
  return name;
}

std::vector<std::string> loaded_python_kernels() {
  std::vector<std::string> out;
  for (const auto& l : loaded()) out.push_back(l->path + ":" + l->function);
  return out;
}

}  // namespace nvfp4
