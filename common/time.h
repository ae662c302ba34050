// Simulated and measured time as an integer count of nanoseconds in a small
// strong type, so durations and instants never mix with byte counts.
#pragma once

#include <compare>
#include <cstdint>

namespace sparseflash {

struct Nanos {
  int64_t ns = 0;

  constexpr auto operator<=>(const Nanos&) const = default;
  constexpr Nanos operator+(Nanos o) const { return {ns + o.ns}; }
  constexpr Nanos operator-(Nanos o) const { return {ns - o.ns}; }
  constexpr Nanos& operator+=(Nanos o) {
    ns += o.ns;
    return *this;
  }
  constexpr double seconds() const { return static_cast<double>(ns) * 1e-9; }
  constexpr double millis() const { return static_cast<double>(ns) * 1e-6; }
};

constexpr Nanos Microseconds(int64_t us) { return {us * 1000}; }
constexpr Nanos Milliseconds(int64_t ms) { return {ms * 1000000}; }
constexpr Nanos Seconds(int64_t s) { return {s * 1000000000}; }
// The latest instant a simulation may reach: 2^60 ns, 36.5 years. Durations
// are held to it, so sums of a few of them cannot overflow 64 bits; a run
// that passes it is an error of that run (EventQueue::overflowed), not a wrap.
inline constexpr Nanos kTimeHorizon{int64_t{1} << 60};

// `ns` nanoseconds rounded up, held to [0, kTimeHorizon] (NaN: kTimeHorizon).
inline Nanos CeilNanos(double ns) {
  if (!(ns < static_cast<double>(kTimeHorizon.ns))) return kTimeHorizon;
  if (!(ns > 0)) return Nanos{};
  const int64_t whole = static_cast<int64_t>(ns);
  return {whole + (ns > static_cast<double>(whole) ? 1 : 0)};
}

// Time to move `bytes` at `bytes_per_s`, rounded up to whole nanoseconds; at
// most kTimeHorizon (a rate of 0 or NaN gives kTimeHorizon).
inline Nanos TransferTime(double bytes, double bytes_per_s) {
  return CeilNanos(bytes / bytes_per_s * 1e9);
}

}  // namespace sparseflash
