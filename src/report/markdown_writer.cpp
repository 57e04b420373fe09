// A Markdown table for pull-request comments and CI job summaries: one row per timing (the case
// with its seed: a sweep over seeds has one row each), then one line per case that did not pass.
#include <fmt/format.h>

#include "src/report/writer.hpp"

namespace nvfp4 {

namespace {

std::string md_cell(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += '\\';
    out += ch == '\n' ? ' ' : ch;
  }
  return out;
}

class MarkdownWriter final : public ReportWriter {
 public:
  std::string format() const override { return "md"; }
  std::string render(const RunInfo& info, const std::vector<CaseResult>& cases,
                     bool) const override {
    std::string out = fmt::format(
        "**nvfp4bench {}** ({}) on {}, {}, {}\n\n", info.version, info.git_revision,
        md_cell(info.device.has_gpu ? info.device.name : "the host backend (no GPU)"),
        info.device.has_gpu ? fmt::format("{} timing", mode_name(info.measure.mode))
                            : std::string("host timings back to back"),
        info.utc_time);
    out += "| case | implementation | verification | median (us) | noise | TFLOP/s | GB/s | SOL | "
           "SM MHz | samples | stopped by |\n";
    out += "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (const TimingRow& r : timing_rows(cases)) {
      const Shape& sh = r.c->problem.shape;
      const Measurement& m = r.t->measurement;
      const Stats& s = m.stats;
      const std::string verification =
          r.t->role != "kernel" ? "-" : disposition_name(r.c->disposition);
      out += fmt::format(
          "| {}x{}x{} L={} {} seed {} | {} ({}) | {} | {:.3f} | {} | {:.4g} | {:.4g} | {} | {} | {} | {} |\n",
          sh.m, sh.n, sh.k, sh.l, dist_name(r.c->problem.dist), r.c->problem.seed, md_cell(r.t->name),
          // a kernel that chooses per shape says what it ran: "sm90 (kernel: fused 128x128 split 2)"
          r.t->role == "kernel" && !r.c->kernel_configuration.empty()
              ? "kernel: " + md_cell(r.c->kernel_configuration)
              : r.t->role,
          verification, s.median,
          s.count > 1 ? fmt::format("±{:.2f}%", 100.0 * s.rse_median()) : "-", r.t->tflops, r.t->gbps,
          r.t->sol_fraction ? fmt::format("{:.1f}%", 100.0 * *r.t->sol_fraction) : "-",
          m.clock.read ? fmt::format("{:.0f}", m.clock.median_mhz) : "-", s.count, m.stop_reason);
    }
    for (const CaseResult& c : cases)
      if (c.disposition != Disposition::Passed)
        out += fmt::format("\n{} {}x{}x{} L={} {} seed {}: **{}** {}\n", md_cell(c.kernel),
                           c.problem.shape.m, c.problem.shape.n, c.problem.shape.k, c.problem.shape.l,
                           dist_name(c.problem.dist), c.problem.seed,
                           disposition_name(c.disposition), md_cell(c.message));
    return out;
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_markdown_writer() { return std::make_unique<MarkdownWriter>(); }

}  // namespace nvfp4
