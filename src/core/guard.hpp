// A kernel cannot end the tool's verdict (docs/errors.md, "A kernel that ends the process").
// Foreign code - a plugin's callbacks, a Python kernel, the loading of either - runs inside
// guard::call. What would end the process from in there becomes the tool's own failure, exit 3,
// with one line naming the code and what it did:
//  - a fatal signal (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL) on the calling thread jumps out of
//    the call, which throws runtime_error: the command writes its report as for any error; on
//    another thread (one the kernel started) the calling thread is made to jump out the same
//    way, and the thread that crashed waits to be ended with the process;
//  - exit()/quick_exit() inside the call reaches our atexit/at_quick_exit hook, which prints
//    the line, lets the command write what it has (last words) and ends with _exit(3);
//  - the run's --timeout (a watchdog thread) jumps out of a call that runs past it the same way;
//    outside any guarded call (a built-in kernel hung on the GPU) the watchdog itself prints the
//    line, writes the last words and ends the process.
// _exit() and SIGKILL cannot be caught in a process: an isolated run (src/app/isolated_run.hpp,
// a sweep's cases) holds for those, its child leaving a verdict file that says it ended knowingly.
#pragma once

#include <functional>
#include <string>

namespace nvfp4::guard {

// Installs the exit hooks and the fatal-signal handlers (once; later calls do nothing).
void install();

// Runs fn() as `who` (e.g. "kernel 'x' (plugin /p/lib.so)"); see above. Not reentrant: a call
// inside a call runs unguarded by its own name (the outer one still holds).
void call_impl(const char* who, void (*fn)(void*), void* ctx);
template <class F>
void call(const std::string& who, F&& fn) {
  call_impl(who.c_str(), [](void* p) { (*static_cast<F*>(p))(); }, &fn);
}

// True once a guarded call was jumped out of: its code's state (the heap, an interpreter) may
// be broken, so the process writes its report and ends with end_now() rather than unwinding
// everything (destructors, Python's finalization).
bool tainted();
// True once a guarded call ran: a kernel's code is in the process, and with it whatever it
// registered to run at exit (atexit, destructors), which may rewrite the reports and the verdict
// file after they are written - the process then ends with end_now() as soon as they are out.
bool foreign_code_ran();
// Flushes stdout and stderr and ends the process at once with `code`.
[[noreturn]] void end_now(int code);

// What a command writes when the process must end from a hook or the watchdog: `why` is the
// line already printed; `live` is false on the watchdog thread, where the main thread's data
// may be changing (write only what was copied before). Cleared with an empty function.
// `subject` is what the watchdog's line names when no guarded call runs ("the run of kernel
// 'auto'"; empty: "the run").
void set_last_words(std::function<void(const std::string& why, bool live)> f,
                    const std::string& subject = {});

// The watchdog of a single run: `seconds` > 0 from now, or 0 for none. `what` names the limit
// in the line ("--timeout 5"). stop_timeout() disarms it.
void start_timeout(double seconds, const std::string& what);
void stop_timeout();

// The isolated run's child: NVFP4BENCH_VERDICT_FILE names where it writes its exit code once
// its verdict and reports are out, NVFP4BENCH_VERDICT_TOKEN a random token it writes beside the
// code, which the parent requires: a kernel that found the file's name and wrote "0" there itself
// before ending the process passed as a verdict. take_verdict_file() reads both at startup,
// overwrites their values where the process's environment block keeps them (/proc/self/environ
// shows that block whatever unsetenv does) and unsets them, so nothing the kernel does or starts
// sees them; note_verdict(code) writes the file (end_now does too). Without the variables both
// do nothing.
constexpr const char* kVerdictFileEnv = "NVFP4BENCH_VERDICT_FILE";
constexpr const char* kVerdictTokenEnv = "NVFP4BENCH_VERDICT_TOKEN";
void take_verdict_file();
bool isolated_child();
void note_verdict(int code);

// "SIGSEGV" (or "signal 40"): how every line of the tool names a signal.
std::string signal_name(int sig);

// SIGINT/SIGTERM end a single run with exit 130 and one line.
void install_interrupt_exit();

}  // namespace nvfp4::guard
