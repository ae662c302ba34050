// Constants and conversions of the on-disk trace format shared by the reader and
// the writer (see trace.proto for the layout). Internal to traces/.
#pragma once

#include <cstdint>

#include "traces/activation.h"
#include "traces/trace.pb.h"

namespace sparseflash::trace_format {

inline constexpr char kMagic[8] = {'S', 'F', 'T', 'R', 'A', 'C', 'E', '1'};
inline constexpr uint32_t kVersion = 1;
// Header token count of a file whose writer never finished.
inline constexpr uint64_t kUnfinishedTokens = ~uint64_t{0};
// Bounds that keep a damaged file from driving allocations.
inline constexpr uint32_t kMaxHeaderBytes = 1 << 20;
inline constexpr uint32_t kMaxFrameBytes = 64 << 20;
inline constexpr uint32_t kTargetFrameBytes = 256 << 10;

void HeaderToProto(const TraceHeader& header, proto::TraceHeader* out);
void HeaderFromProto(const proto::TraceHeader& in, TraceHeader* out);

}  // namespace sparseflash::trace_format
