#include "src/python/python_exit.hpp"

#include <pybind11/eval.h>

namespace py = pybind11;

namespace nvfp4 {
namespace {

// BaseException, like SystemExit: a submission's `except Exception` does not swallow it.
constexpr const char* kHooks = R"PY(
import os

class KernelExit(BaseException):
    def __init__(self, code):
        super().__init__(code)
        self.code = code

_real_exit, _pid = os._exit, os.getpid()

def _exit(code=0):
    if os.getpid() != _pid:  # a child the submission forked (multiprocessing) ends as it asks
        _real_exit(code)
    raise KernelExit(code)

os._exit = _exit

def exit_text(exc):
    if isinstance(exc, KernelExit):
        return f"called os._exit({exc.code!r})"
    if isinstance(exc, SystemExit):
        code = 0 if exc.code is None else exc.code
        return f"called sys.exit({code!r})"
    return ""
)PY";

py::object& hooks() {
  static py::object* h = nullptr;  // leaked, like the interpreter
  if (!h) {
    py::object m = py::module_::import("types").attr("ModuleType")("_nvfp4bench_exit");
    py::exec(kHooks, m.attr("__dict__"));
    h = new py::object(std::move(m));
  }
  return *h;
}

}  // namespace

void install_python_exit_hooks() { (void)hooks(); }

std::string python_exit_text(py::handle exc) {
  try {
    return py::str(hooks().attr("exit_text")(exc)).cast<std::string>();
  } catch (const py::error_already_set&) {
    return {};
  }
}

}  // namespace nvfp4
