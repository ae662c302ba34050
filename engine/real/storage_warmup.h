// Reads a file once, in order, past this machine's page cache (O_DIRECT), so
// that storage which itself caches what was read (a virtual disk whose host
// keeps the image's pages, a drive's own cache) is in the state a run's
// repeated reads leave it in. A calibration and the runs measured against it
// then see the same device: on a virtual disk, 4 KiB random reads of a file
// nobody read lately ran at 36-57 MB/s here, and at 250-310 MB/s once it had
// been read (docs/replay.md). Real phones' flash keeps no such cache; one
// sequential pass costs them a few seconds and changes nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace sparseflash {

struct StorageWarmup {
  int64_t bytes = 0;   // read
  double seconds = 0;  // the pass's wall time
  bool direct = true;  // false: the file system refuses O_DIRECT, nothing was read
  double bytes_per_s() const { return seconds > 0 ? bytes / seconds : 0; }
};

// Reads all of `path` in order, in 4 MiB requests; `progress` (may be empty)
// gets the bytes read so far about every GiB. Where the file system
// refuses O_DIRECT the pass is skipped (direct = false): through the page
// cache it would warm this machine's cache, not the storage's.
absl::StatusOr<StorageWarmup> ReadFileOnce(const std::string& path,
                                           const std::function<void(int64_t)>& progress = {});

}  // namespace sparseflash
