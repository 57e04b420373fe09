// The sm100 bisect's probes and decoder (bisect.hpp; the design and how to read the output:
// docs/kernels.md, "The bisect").
//
// Every probe keeps the behaviours it does not judge out of its result:
//  - only the K-step probes give MMAs 1-3 a nonzero scale; every other probe has the scales of
//    K blocks 4-15 zero on one side, so only MMA 0 (start at the atom, no K step) contributes;
//  - operands that are not the probe's subject are all ones along K, and scales that are not
//    its subject are one value for a whole atom (every lane, column and byte alike);
//  - every probe goes through the epilogue: the epilogue probes come first, and the mapping they
//    find is undone before the others are read. A lane the scale copy left without its atom
//    row (found by the lane probes) is left out of the K-step and placement probes.
#include "kernels/sm100/bisect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>

#include "src/format/nvfp4.hpp"

namespace nvfp4 {
namespace sm100 {
namespace bisect {

namespace {

constexpr int kRows = 128;             // M = N
constexpr int kK = 256;                // one K tile
constexpr int kKBlocks = kK / kBlockSize;  // 16: four per MMA
constexpr unsigned kOne = 2;           // E2M1 code of 1.0
constexpr unsigned kLabelBase = 0x30;  // UE4M3 0.5: labels are the codes from here (0.5 ... 7.5)

unsigned scale_code(float v) { return e4m3_encode(v); }

// The rows of one operand (A or B) and their scales, as functions of the row.
struct Side {
  std::function<unsigned(int row, int k)> code = [](int, int) { return kOne; };
  std::function<unsigned(int row, int kblock)> scale = [](int, int) { return scale_code(1.0f); };
};

// Only MMA 0 (K blocks 0-3) has nonzero scales on this side.
Side mma0_only(Side s) {
  auto inner = s.scale;
  s.scale = [inner](int r, int kb) { return kb < 4 ? inner(r, kb) : 0u; };
  return s;
}

void fill(const Side& s, std::vector<uint8_t>& packed, std::vector<uint8_t>& linear,
          std::vector<uint8_t>& blocked) {
  for (int r = 0; r < kRows; ++r) {
    for (int k = 0; k < kK; k += 2)
      packed[static_cast<size_t>(r * kK / 2 + k / 2)] = fp4_pack(s.code(r, k), s.code(r, k + 1));
    for (int kb = 0; kb < kKBlocks; ++kb)
      linear[static_cast<size_t>(r * kKBlocks + kb)] = static_cast<uint8_t>(s.scale(r, kb));
  }
  linear_to_blocked(ScaleLayout::make(kRows, kK, 1), linear.data(), blocked.data());
}

Probe make(std::string name, std::string what, const Side& a, const Side& b) {
  Probe p{std::move(name), std::move(what), {}};
  p.tensors.allocate(kShape);  // C poisoned
  fill(a, p.tensors.a, p.tensors.sfa, p.tensors.sfa_blocked);
  fill(b, p.tensors.b, p.tensors.sfb, p.tensors.sfb_blocked);
  return p;
}

// A probe of one operand X (A or B): `x` its side, the other all ones with scale 1 (or `other`).
Probe make_x(const std::string& name, const std::string& what, bool x_is_a, const Side& x,
             const Side& other = Side{}) {
  const char* xs = x_is_a ? "A" : "B";
  return make(fmt::format("{}-{}", name, xs), fmt::format("{}: {}", xs, what), x_is_a ? x : other,
              x_is_a ? other : x);
}

// The epilogue probes: C = 64 * a(m) * b(n) from MMA 0 alone; a(m), b(n) the E2M1 magnitudes of
// octal digits of m and n (3 digits each: m, n < 128).
constexpr int kDigits = 3;
constexpr double kEpilogueUnit = 64.0;  // 64 products of 1 x 1 with scales 1

Side digit_side(int digit) {
  Side s;
  s.code = [digit](int r, int) { return static_cast<unsigned>((r >> (3 * digit)) & 7); };
  return s;
}

// The labels: UE4M3 codes kLabelBase + i; -1 when v is no label.
int label_of(double v, int count) {
  if (!(v > 0) || !std::isfinite(v)) return -1;
  const unsigned code = e4m3_encode(static_cast<float>(v));
  if (static_cast<double>(e4m3_decode(code)) != v) return -1;
  const int i = static_cast<int>(code) - static_cast<int>(kLabelBase);
  return i >= 0 && i < count ? i : -1;
}

// The magnitude index of an E2M1 value, -1 when v is none.
int digit_of(double v) {
  for (unsigned d = 0; d < 8; ++d)
    if (static_cast<double>(e2m1_decode(d)) == v) return static_cast<int>(d);
  return -1;
}

std::string kblocks_text(int first, int last) {
  return first == last ? fmt::format("K block {}", first) : fmt::format("K blocks {}-{}", first, last);
}

// Probe indices, in probes() order.
enum : int {
  kEpilogueRef = 0,
  kEpilogueRowDigit = 1,  // + digit
  kEpilogueColDigit = 1 + kDigits,
  kLaneA = 1 + 2 * kDigits,
  kLaneB,
  kKStepA,
  kKStepB,
  kPlaceA,
  kPlaceB,
  kProbes
};

}  // namespace

const char* behaviour_name(Behaviour b) {
  switch (b) {
    case Behaviour::KStep: return "(a) K step inside the 128-byte swizzle atom";
    case Behaviour::ScaleCopy: return "(b) tcgen05.cp 32x128b.warpx4 lane mapping";
    case Behaviour::ScalePlacement: return "(c) scale_vec::4X / block16 scale placement in TMEM";
    case Behaviour::Epilogue: return "(d) epilogue (TMEM -> registers -> C)";
  }
  return "?";
}

std::vector<Probe> probes() {
  std::vector<Probe> v;
  const Side ones_mma0 = mma0_only(Side{});
  v.push_back(make("epilogue-ref", "A, B all ones; scales 1 on K blocks 0-3 of A, 0 beyond",
                   ones_mma0, Side{}));
  for (int d = 0; d < kDigits; ++d)
    v.push_back(make(fmt::format("epilogue-row-digit{}", d),
                     fmt::format("A row m all the E2M1 magnitude of octal digit {} of m", d),
                     mma0_only(digit_side(d)), Side{}));
  for (int d = 0; d < kDigits; ++d)
    v.push_back(make(fmt::format("epilogue-col-digit{}", d),
                     fmt::format("B row n all the E2M1 magnitude of octal digit {} of n", d),
                     ones_mma0, digit_side(d)));
  for (bool x_is_a : {true, false}) {
    Side lane;
    lane.scale = [](int r, int) { return kLabelBase + static_cast<unsigned>(r % 32); };
    v.push_back(make_x("lane", "scales of row r all label r % 32 (atom row r % 32), K blocks 0-3",
                       x_is_a, mma0_only(lane)));
  }
  for (bool x_is_a : {true, false}) {
    Side k;
    k.code = [](int r, int kk) { return kk / 32 == (r / 8) % 8 ? kOne : 0u; };
    k.scale = [](int, int kb) { return scale_code(static_cast<float>(1 << (2 * (kb / 4)))); };
    v.push_back(make_x("kstep", "row r ones in 16-byte chunk (r / 8) % 8 only; scales 4^j for MMA j",
                       x_is_a, k));
  }
  for (bool x_is_a : {true, false}) {
    Side p;
    p.code = [](int r, int kk) { return kk / 16 == r % 4 ? kOne : 0u; };
    p.scale = [](int r, int kb) { return kLabelBase + static_cast<unsigned>(4 * (r / 32) + kb); };
    v.push_back(make_x("placement",
                       "row r ones in K block r % 4 only; scale (r, c) label 4 * (r / 32) + c, "
                       "K blocks 0-3",
                       x_is_a, mma0_only(p)));
  }
  return v;
}

bool Report::differs_in(Behaviour b) const {
  for (const auto& f : differs)
    if (f.behaviour == b) return true;
  return false;
}

std::string Report::text() const {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  if (differs.empty()) return s + "verdict: no behaviour differs from the documented one\n";
  s += "verdict: differs:";
  for (size_t i = 0; i < differs.size(); ++i)
    s += fmt::format("{} {}", i ? ";" : "", behaviour_name(differs[i].behaviour));
  return s + "\n";
}

namespace {

using Outputs = std::vector<std::vector<uint16_t>>;

double at(const std::vector<uint16_t>& c, int r, int col) {
  return fp16_bits_to_double(c[static_cast<size_t>(r * kRows + col)]);
}

struct Decoder {
  const Outputs& out;
  Report report;
  // The epilogue's mapping undone: d[p][m][n] is the accumulator element (m, n) of probe p.
  Outputs d;
  // Lanes (rows of A, rows of B) that hold their own atom row.
  std::array<std::vector<char>, 2> good{std::vector<char>(kRows, 1), std::vector<char>(kRows, 1)};

  void add(Behaviour b, const std::string& state, const std::string& how = {}) {
    report.lines.push_back(fmt::format("{}: {}{}{}", behaviour_name(b), state, how.empty() ? "" : ": ", how));
    if (state == "DIFFERS") report.differs.push_back({b, how});
  }

  // Element (x_row, other) of probe p, with x_row a row of A (x_is_a) or of B.
  double get(int p, bool x_is_a, int x_row, int other) const {
    return fp16_bits_to_double(d[static_cast<size_t>(p)][static_cast<size_t>(
        x_is_a ? x_row * kRows + other : other * kRows + x_row)]);
  }

  void epilogue();
  void lanes(bool x_is_a, std::vector<std::string>& how);
  void kstep(bool x_is_a, std::vector<std::string>& how, int& judged);
  void placement(bool x_is_a, std::vector<std::string>& how, int& judged);
};

void Decoder::epilogue() {
  d = out;
  int readable = 0, unwritten = 0, undecodable = 0, moved = 0, transposed = 0;
  std::string first_unwritten, first_undecodable, first_moved;
  std::vector<std::pair<int, int>> src(kRows * kRows, {-1, -1});
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kRows; ++c) {
      bool poison = false;
      for (int p = kEpilogueRef; p < kLaneA; ++p)
        poison |= out[static_cast<size_t>(p)][static_cast<size_t>(r * kRows + c)] == kPoisonFp16;
      if (poison) {
        if (unwritten++ == 0) first_unwritten = fmt::format("C[{}][{}]", r, c);
        continue;
      }
      if (at(out[kEpilogueRef], r, c) != kEpilogueUnit) continue;  // not this probe's value
      ++readable;
      int idx[2] = {0, 0};
      bool ok = true;
      for (int which = 0; which < 2; ++which)
        for (int dg = 0, mul = 1; dg < kDigits; ++dg, mul *= 8) {
          const int p = (which == 0 ? kEpilogueRowDigit : kEpilogueColDigit) + dg;
          const int x = digit_of(at(out[static_cast<size_t>(p)], r, c) / kEpilogueUnit);
          ok &= x >= 0;
          idx[which] += std::max(x, 0) * mul;
        }
      if (!ok || idx[0] >= kRows || idx[1] >= kRows) {
        if (undecodable++ == 0) first_undecodable = fmt::format("C[{}][{}]", r, c);
        continue;
      }
      src[static_cast<size_t>(r * kRows + c)] = {idx[0], idx[1]};
      if (idx[0] == r && idx[1] == c) continue;
      if (moved++ == 0)
        first_moved = fmt::format("C[{}][{}] holds accumulator row {}, column {}", r, c, idx[0], idx[1]);
      // tcgen05.ld's lanes and columns exchanged within a warp's 32 x 32 block.
      transposed += idx[0] == 32 * (r / 32) + c % 32 && idx[1] == 32 * (c / 32) + r % 32;
    }
  if (readable == 0) {
    add(Behaviour::Epilogue, "not judged",
        fmt::format("no output holds the reference probe's {} ({} never written)", kEpilogueUnit,
                    unwritten));
    return;
  }
  // Undo the mapping found, where it was found, for the later probes.
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kRows; ++c) {
      const auto [m, n] = src[static_cast<size_t>(r * kRows + c)];
      if (m < 0 || (m == r && n == c)) continue;
      for (size_t p = 0; p < out.size(); ++p)
        d[p][static_cast<size_t>(m * kRows + n)] = out[p][static_cast<size_t>(r * kRows + c)];
    }
  std::vector<std::string> how;
  if (unwritten) how.push_back(fmt::format("{} outputs never written (first {})", unwritten, first_unwritten));
  if (moved)
    how.push_back(fmt::format("{} of {} outputs hold another element of the accumulator ({}){}", moved,
                              readable, first_moved,
                              transposed == moved
                                  ? "; each 32x32 block is transposed: thread t's register i came "
                                    "from lane i, column t, not lane t, column i"
                                  : ""));
  // Outputs that hold the reference value but no element in the digit probes are the epilogue's
  // only where every output held it; else they are more of the wrongly computed ones.
  const bool all_readable = readable == kRows * kRows;
  if (undecodable && all_readable)
    how.push_back(fmt::format("{} outputs match no element of the accumulator (first {})", undecodable,
                              first_undecodable));
  if (!how.empty()) {
    add(Behaviour::Epilogue, "DIFFERS", fmt::format("{}", fmt::join(how, "; ")));
    return;
  }
  add(Behaviour::Epilogue, "ok",
      all_readable ? ""
                   : fmt::format("judged on the {} of {} outputs that hold the reference value; the "
                                 "others are computed wrong, not misplaced (see the scale probes)",
                                 readable - undecodable, kRows * kRows));
}

// Lane r of the scale columns of X holds the atom row that label_of reads back in row r of the
// lane probe (the most frequent label over the row; -1 none).
void Decoder::lanes(bool x_is_a, std::vector<std::string>& how) {
  const int p = x_is_a ? kLaneA : kLaneB;
  const char* sf = x_is_a ? "SFA" : "SFB";
  std::vector<int> held(kRows, -1);
  for (int r = 0; r < kRows; ++r) {
    std::map<int, int> count;
    for (int o = 0; o < kRows; ++o) {
      const int l = label_of(get(p, x_is_a, r, o) / kEpilogueUnit, 32);
      if (l >= 0) ++count[l];
    }
    int best = 0;
    for (const auto& [l, n] : count)
      if (n > best) best = n, held[static_cast<size_t>(r)] = l;
    good[x_is_a ? 0 : 1][static_cast<size_t>(r)] = held[static_cast<size_t>(r)] == r % 32;
  }
  for (int q = 0; q < 4; ++q) {
    int wrong = 0, none = 0, first = -1;
    for (int r = 32 * q; r < 32 * q + 32; ++r) {
      if (held[static_cast<size_t>(r)] == r % 32) continue;
      ++wrong;
      none += held[static_cast<size_t>(r)] < 0;
      if (first < 0) first = r;
    }
    if (wrong == 0) continue;
    const std::string lanes = fmt::format("lanes {}-{}", 32 * q, 32 * q + 31);
    if (none == 32)
      how.push_back(fmt::format("{} {} hold no atom row: the copy did not reach lane quarter {}",
                                sf, lanes, q));
    else
      how.push_back(fmt::format("{} {}: {} of 32 lanes hold another atom row (lane {} holds {} "
                                "where row {} was expected)",
                                sf, lanes, wrong, first,
                                held[static_cast<size_t>(first)] < 0
                                    ? std::string("none")
                                    : fmt::format("row {}", held[static_cast<size_t>(first)]),
                                first % 32));
  }
}

std::string chunks_text(const std::vector<int>& chunks) {
  // chunk q (16 bytes) = K blocks 2q, 2q + 1; runs of consecutive chunks as one range.
  if (chunks.empty()) return "nothing";
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < chunks.size()) {
    size_t j = i;
    while (j + 1 < chunks.size() && chunks[j + 1] == chunks[j] + 1) ++j;
    parts.push_back(kblocks_text(2 * chunks[i], 2 * chunks[j] + 1));
    i = j + 1;
  }
  return fmt::format("{}", fmt::join(parts, " and "));
}

// K-step probe of X: row r holds ones in 16-byte chunk q = (r/8) % 8 only, MMA j's scales are
// 4^j, so the output is 32 * sum_j 4^j * (halves of MMA j that read chunk q): MMA j's reads
// of chunk q are the base-4 digits of output / 32.
void Decoder::kstep(bool x_is_a, std::vector<std::string>& how, int& judged) {
  const int p = x_is_a ? kKStepA : kKStepB;
  const auto& gx = good[x_is_a ? 0 : 1];
  const auto& go = good[x_is_a ? 1 : 0];
  // reads[phase][mma]: the chunks MMA mma read for rows of this swizzle phase (row % 8).
  std::vector<std::vector<std::vector<int>>> reads(8, std::vector<std::vector<int>>(4));
  std::vector<std::vector<char>> seen(8, std::vector<char>(8, 0));
  int bad_values = 0;
  std::string first_bad;
  for (int r = 0; r < kRows; ++r) {
    if (!gx[static_cast<size_t>(r)]) continue;
    const int phase = r % 8, q = (r / 8) % 8;
    for (int o = 0; o < kRows; ++o) {
      if (!go[static_cast<size_t>(o)]) continue;
      ++judged;
      const double v = get(p, x_is_a, r, o) / 32.0;
      const bool whole = v >= 0 && v < 256 && v == std::floor(v);
      const int u = whole ? static_cast<int>(v) : 0;
      bool ok = whole;
      for (int j = 0; j < 4; ++j) ok &= ((u >> (2 * j)) & 3) <= 2;
      if (!ok) {
        if (bad_values++ == 0)
          first_bad = fmt::format("{} row {}: {}", x_is_a ? "A" : "B", r, get(p, x_is_a, r, o));
        continue;
      }
      if (seen[static_cast<size_t>(phase)][static_cast<size_t>(q)]) continue;
      seen[static_cast<size_t>(phase)][static_cast<size_t>(q)] = 1;
      for (int j = 0; j < 4; ++j)
        for (int h = 0; h < ((u >> (2 * j)) & 3); ++h)
          reads[static_cast<size_t>(phase)][static_cast<size_t>(j)].push_back(q);
    }
  }
  const char* xs = x_is_a ? "A" : "B";
  std::vector<int> phases;
  std::string example;
  for (int ph = 0; ph < 8; ++ph) {
    std::vector<std::string> mmas;
    for (int j = 0; j < 4; ++j) {
      auto got = reads[static_cast<size_t>(ph)][static_cast<size_t>(j)];
      std::sort(got.begin(), got.end());
      // Expected: chunks 2j and 2j + 1, where the probe tested them (rows of that chunk judged).
      std::vector<int> want;
      for (int q : {2 * j, 2 * j + 1})
        if (seen[static_cast<size_t>(ph)][static_cast<size_t>(q)]) want.push_back(q);
      if (got == want) continue;
      mmas.push_back(fmt::format("MMA {} read {} where it should read {}", j, chunks_text(got),
                                 kblocks_text(4 * j, 4 * j + 3)));
    }
    if (mmas.empty()) continue;
    phases.push_back(ph);
    if (example.empty())
      example = fmt::format("{} rows with row % 8 = {}: {}", xs, ph, fmt::join(mmas, ", "));
  }
  if (!phases.empty())
    how.push_back(fmt::format("{} (rows differing at row % 8 in {{{}}})", example, fmt::join(phases, ", ")));
  if (bad_values)
    how.push_back(fmt::format("{} {} outputs are no sum of the probe's K chunks (first {})", bad_values,
                              xs, first_bad));
}

// Placement probe of X: row r holds ones in K block c = r % 4 only; the scale of (row block w,
// K block c') is label 4w + c', so output / 16 names the scale MMA 0 applied to K block c of row r.
void Decoder::placement(bool x_is_a, std::vector<std::string>& how, int& judged_all) {
  const int p = x_is_a ? kPlaceA : kPlaceB;
  int judged = 0;
  const auto& gx = good[x_is_a ? 0 : 1];
  const auto& go = good[x_is_a ? 1 : 0];
  int wrong = 0, swapped = 0, reversed = 0;
  std::string first;
  for (int r = 0; r < kRows; ++r) {
    if (!gx[static_cast<size_t>(r)]) continue;
    const int w = r / 32, c = r % 4;
    for (int o = 0; o < kRows; ++o) {
      if (!go[static_cast<size_t>(o)]) continue;
      ++judged;
      const int l = label_of(get(p, x_is_a, r, o) / 16.0, 16);
      if (l == 4 * w + c) continue;
      ++wrong;
      swapped += l == 4 * c + w;
      reversed += l == 4 * w + 3 - c;
      if (!first.empty()) continue;
      first = l < 0 ? fmt::format("row {}, K block {}: {} is no scale of the probe", r, c,
                                  get(p, x_is_a, r, o))
                    : fmt::format("row {}, K block {} took the scale of rows {}-{}, K block {} "
                                  "(byte {} of column base + {}) where byte {} of column base + "
                                  "{} was expected",
                                  r, c, 32 * (l / 4), 32 * (l / 4) + 31, l % 4, l % 4, l / 4, c, w);
  }
  }
  judged_all += judged;
  if (wrong == 0) return;
  const char* pattern = swapped == wrong   ? ": column and byte exchanged (K block c of row m read "
                                             "byte m / 32 of column base + c)"
                        : reversed == wrong ? ": the bytes of each column reversed (K block c read "
                                              "byte 3 - c)"
                                            : "";
  how.push_back(fmt::format("{}: {} of {} outputs took another scale{}; {}", x_is_a ? "A" : "B", wrong,
                            judged, pattern, first));
}

}  // namespace

Report decode(const Outputs& outputs) {
  if (outputs.size() != static_cast<size_t>(kProbes))
    throw std::invalid_argument(
        fmt::format("sm100 bisect: {} outputs given, expected one per probe ({})", outputs.size(),
                    static_cast<int>(kProbes)));
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].size() != static_cast<size_t>(kRows * kRows))
      throw std::invalid_argument(fmt::format("sm100 bisect: output {} has {} elements, expected {}",
                                              i, outputs[i].size(), kRows * kRows));
  Decoder dec{outputs, {}, {}};
  dec.epilogue();

  std::vector<std::string> how;
  dec.lanes(true, how);
  dec.lanes(false, how);
  if (how.empty())
    dec.add(Behaviour::ScaleCopy, "ok");
  else
    dec.add(Behaviour::ScaleCopy, "DIFFERS", fmt::format("{}", fmt::join(how, "; ")));

  const int good_lanes =
      static_cast<int>(std::count(dec.good[0].begin(), dec.good[0].end(), 1) *
                       std::count(dec.good[1].begin(), dec.good[1].end(), 1));
  const std::string on =
      good_lanes == kRows * kRows
          ? ""
          : fmt::format("judged on the {} outputs whose rows of A and B hold their own atom rows",
                        good_lanes);
  for (Behaviour b : {Behaviour::KStep, Behaviour::ScalePlacement}) {
    how.clear();
    int judged = 0;
    for (bool x_is_a : {true, false}) {
      if (b == Behaviour::KStep)
        dec.kstep(x_is_a, how, judged);
      else
        dec.placement(x_is_a, how, judged);
    }
    if (judged == 0)
      dec.add(b, "not judged", "no row of A or B holds its own scale atom row (see (b))");
    else if (how.empty())
      dec.add(b, "ok", on);
    else
      dec.add(b, "DIFFERS", fmt::format("{}", fmt::join(how, "; ")));
  }
  return dec.report;
}

}  // namespace bisect
}  // namespace sm100
}  // namespace nvfp4
