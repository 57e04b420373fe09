// nvfp4bench: CLI wiring only. Parsing lives in src/app/cli.cpp, each command's work in src/app/.
#include <cstdio>
#include <iostream>
#include <new>

#include "src/app/cli.hpp"
#include "src/core/error.hpp"
#include "src/core/guard.hpp"
#include "src/core/lockdown.hpp"

namespace {

int run(int argc, char** argv) {
  try {
    nvfp4::CommandLine cli;
    std::string message;
    const int rc = cli.parse(argc, argv, message);
    if (rc == nvfp4::kExitPass) {
      std::cout << message;
      return rc;
    }
    if (rc != nvfp4::CommandLine::kExecute) {
      std::fprintf(stderr, "nvfp4bench: %s\n", message.c_str());
      return rc;
    }
    return cli.execute(argc, argv);
  } catch (const nvfp4::Error& e) {
    std::fprintf(stderr, "nvfp4bench: %s\n", e.what());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "nvfp4bench: out of host memory\n");
    return nvfp4::kExitRuntime;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nvfp4bench: internal error: %s\n", e.what());
    return nvfp4::kExitRuntime;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything a kernel brings is loaded: no seccomp filter or userfaultfd of a kernel's can
  // then hold or serve the tool's own calls (src/core/lockdown.hpp).
  (void)nvfp4::lock_down_process();
  nvfp4::guard::take_verdict_file();  // an isolated run's child (src/app/isolated_run.hpp)
  const int rc = run(argc, argv);
  nvfp4::guard::note_verdict(rc);
  // The verdict and the reports are out. With a kernel's code in the process, end now: its atexit
  // handlers and destructors once rewrote the report and the verdict file after this point, and
  // a kernel that crashed or was stopped inside a guarded call may have left its state (heap,
  // interpreter) broken. (Under ASan such runs skip LeakSanitizer's check at exit.)
  if (nvfp4::guard::tainted() || nvfp4::guard::foreign_code_ran()) nvfp4::guard::end_now(rc);
  return rc;
}
