// `nvfp4bench sweep CONFIG`: the cases of a config, crash-safe and resumable (src/sweep/).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "src/app/commands.hpp"
#include "src/case/number_options.hpp"
#include "src/core/error.hpp"
#include "src/report/writer.hpp"
#include "src/sweep/runner.hpp"

namespace nvfp4 {

Subcommand add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<sweep::SweepOptions>();
  auto timeout = std::make_shared<double>(0);
  auto peers = std::make_shared<std::string>();
  auto kernels = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "sweep",
      "run the cases of a sweep config (docs/sweeps.md): each finished case is appended "
      "to a JSONL file at once, the report is written at the end");
  sub->footer(
      "Exit codes: 0 every case passed; 1 some case incorrect; 2 bad config or usage, or (nothing "
      "worse) some case not supported; 3 some case ended in an error (CUDA error, crash, timeout); "
      "130 interrupted (SIGINT/SIGTERM/SIGHUP): the report holds the finished cases, --resume runs the "
      "rest.");
  // Given twice: refused, as for a single run's options (src/case/run_options.cpp).
  sub->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  sub->add_option("config", o->config_path, "sweep config (JSON; configs/sweep.schema.json)")
      ->required();
  sub->add_option("--json", o->json_path,
                  "final report (default: sweep-STEM.json in the current folder, STEM the "
                  "config's file name without .json; sweep-STEM.shard-I-of-N.json for a shard)");
  sub->add_option("--jsonl", o->jsonl_path, "record file (default: the report's path with .jsonl)");
  CLI::Option* resume = sub->add_flag(
      "--resume", o->resume, "skip the cases already recorded in the JSONL and run the rest");
  sub->add_flag("--overwrite", o->overwrite, "start again, discarding an existing JSONL")
      ->excludes(resume);
  sub->add_flag(
      "--isolate,!--no-isolate", o->isolate,
      "run each case in a child process (default; a crash or CUDA fault only ends that case) "
      "or in this process");
  CLI::Option* t =
      sub->add_option("--case-timeout", *timeout,
                      "seconds before an isolated case is killed (default: the config's "
                      "timeout_s, else 600)")
          ->check(number_text());
  sub->add_option("--devices", o->devices,
                  "GPUs to spread the cases over, one worker each: all, or a list like 0,1");
  sub->add_option("--shard", o->shard, "run only the cases c with c % N == I (0 <= I < N)")
      ->capture_default_str();
  CLI::Option* p = sub->add_option("--peers", *peers,
                                   "peers for every case, replacing the config's: "
                                   "a list like a,b, all, or none");
  CLI::Option* k = sub->add_option("--kernels", *kernels,
                                   "kernels for every case, replacing the config's: a list like "
                                   "sm90,py:my_submission (each case is run once per kernel)");
  sub->add_flag("--samples", o->keep_samples, "keep the raw timing samples in the records");
  std::string formats;
  for (const auto& f : writer_formats()) formats += (formats.empty() ? "" : "|") + f;
  CLI::Option* format = sub->add_option(
      "--format", o->format,
      formats + ": also write the report in this format to --output (docs/report.md)");
  CLI::Option* output = sub->add_option("--output", o->output, "where --format writes (a file)");
  sub->add_flag("--list-cases", o->list_cases,
                "print the expanded cases and their command lines; run nothing");
  sub->add_option("--progress", o->progress,
                  "auto (a status line on a terminal, else plain lines), bar, lines or off")
      ->capture_default_str();
  return {sub, [o, timeout, peers, kernels, t, p, k, format, output](int argc, char** argv) {
            // Both or neither, refused before any case runs.
            if (format->count() > 0 && output->count() == 0)
              throw usage_error(fmt::format("--format {}: needs --output PATH", o->format));
            if (output->count() > 0 && format->count() == 0)
              throw usage_error(fmt::format("--output {}: needs --format ({})", o->output,
                                            fmt::join(writer_formats(), ", ")));
            if (format->count() > 0) (void)writer_for("--format", o->format);
            if (t->count() > 0) o->case_timeout_s = *timeout;
            if (p->count() > 0) o->peers = *peers;
            if (k->count() > 0) o->kernels = *kernels;
            return sweep::run_sweep(*o, argc, argv);
          }};
}

}  // namespace nvfp4
