// A Python kernel cannot end the tool's run (docs/python.md): os._exit is replaced inside the
// embedded interpreter by a function that raises, and an exit raised by the submission
// (sys.exit, exit(), the replaced os._exit) is told apart from its other exceptions. Only for
// src/python/python_kernels.cpp; the caller holds the GIL.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace nvfp4 {

// Replaces os._exit (once per interpreter).
void install_python_exit_hooks();
// "called sys.exit(0)" / "called os._exit(3)" when `exc` is such an exit, else "".
std::string python_exit_text(pybind11::handle exc);

}  // namespace nvfp4
