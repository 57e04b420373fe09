// Refitting the sm90 cost models (heuristics.hpp) to H200 timings of the configurations their
// choosers weigh: the tool's reports of a sweep such as configs/sm90-fit.json (docs/kernels.md,
// "Refitting the cost models"). Each model is linear in its coefficients, so the fit is a
// relative least-squares solve over the timings within `within` of their shape's fastest (the
// configurations a chooser must rank well; the slow ones would pull the fit away from them).
// Host C++ without CUDA; bench/sm90_fit.cpp prints a fit, tests/unit/sm90_host_test.cpp checks
// that it gives back the shipped coefficients from the data they were fitted to.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/sm90/heuristics.hpp"

namespace nvfp4::sm90 {

// One configuration's median time on one shape (L = 1 or more).
struct Timed {
  Shape shape;
  Config config;
  double us = 0;
  int sm_count = 0;  // the report's device.sm_count; 0 where it names none
};

// Adds the timings of a report in the tool's format to `into`: each case's problem.{m,n,k,l},
// kernel.configuration and kernel_timing.stats.median_us. Cases whose disposition is other than
// "passed" are left out, and so are cases of other kernels (kernel.name not sm90, sm90-fused or
// sm90-2phase) and cases without a configuration parse_config accepts. Each timing carries the
// report's device.sm_count (an integer >= 1 where present). A configuration timed more than
// once on one shape (in this report or one added before) keeps the lower median. Throws
// usage_error "WHAT: cases[3].kernel_timing.stats.median_us: missing; expected a number".
void add_timings(const nlohmann::json& report, const std::string& what, std::vector<Timed>& into);

struct FitOptions {
  double within = 1.5;  // timings used: at most this many times their shape's fastest
  int sm_count = 132;   // the SM count for timings whose report names none
};

// The one SM count of the timings' reports (those that name one), else `fallback`; usage_error
// when they name two ("timings from GPUs with 132 and 114 SMs: fit one GPU's at a time").
int timings_sm_count(const std::vector<Timed>& timings, int fallback);

struct TermFit {
  std::string name;
  double shipped = 0, fitted = 0;
  int timings = 0;     // used timings in which the term is not zero
  bool held = false;   // not fitted: the shipped coefficient kept, for the reason `why`
  enum class Held { No, Unused, Explained, Negative };
  Held why = Held::No;  // no timing exercises it; the others explain it; it came out negative
};

// A model's fit, over the timings of its path (Path::Fused: split-K and stream-K; TwoPhase).
struct ModelFit {
  Path path = Path::Fused;
  int shapes = 0, timings = 0;  // shapes of the path, timings used
  std::vector<TermFit> terms;
  // |estimate / time - 1| over the used timings: mean and worst, with the shipped coefficients
  // and the fitted ones, and where the worst is ("SHAPE CONFIGURATION").
  double shipped_mean = 0, shipped_worst = 0, fitted_mean = 0, fitted_worst = 0;
  std::string shipped_worst_at, fitted_worst_at;
  // Each used timing with both estimates, in shape order (where a model misses, and how).
  struct Residual {
    Timed timed;
    double shipped_us = 0, fitted_us = 0;
  };
  std::vector<Residual> residuals;
};

ModelFit fit_model(const std::vector<Timed>& timings, Path path, const FitOptions& o = {});

// The shipped models with `fit`'s coefficients in place of the shipped ones of its path.
CostModels with_fit(const CostModels& base, const ModelFit& fit);

// How each shape's pick by the models `m` stands against the fastest timed configuration of its
// path that the chooser may take (configuration_error empty): the fused chooser's (choose_fused
// where stream-K was timed on the shape, else choose_fused_split_k) or the two-phase one's. A
// pick that was not timed is counted, not ranked.
struct PickCheck {
  int shapes = 0, untimed = 0;
  double worst = 1.0, geomean = 1.0;  // pick's time / fastest
  std::string worst_at;               // "SHAPE: PICK (PICK_US us, fastest FASTEST FASTEST_US us)"
};
PickCheck check_picks(const std::vector<Timed>& timings, Path path, const CostModels& m, int sm_count = 132);

// The choices fixture (tests/fixtures/sm90-choices.txt): a line per shape and SM count,
// "m n k l sms | AUTO | FUSED | TWO-PHASE", the picks of choose_config with each path.
// choices_of gives the part from " | " on for models m; parse_choice_line reads a line (false for
// a comment or a blank line; usage_error naming the line for a malformed one).
std::string choices_of(const Shape& s, int sm_count, const CostModels& m = shipped_models());
bool parse_choice_line(const std::string& line, int line_no, Shape* s, int* sm_count, std::string* picks);

// "128x7168x16384" ("...xL" when L > 1).
std::string shape_name(const Shape& s);

}  // namespace nvfp4::sm90
