// The bundled device profiles (devices/catalog/*.textproto, compiled into the
// binary) and loading of a user's profile file. Thread-safe to read.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "common/named_catalog.h"
#include "devices/device_profile.h"

namespace sparseflash {

const NamedCatalog<DeviceProfile>& BuiltinDevices();

// Parses a DeviceProfile text proto; `origin` names it in errors.
absl::StatusOr<DeviceProfile> ParseDeviceProfile(const std::string& text,
                                                 const std::string& origin);

// A catalog name or a path to a .textproto profile (e.g. from `device calibrate`).
absl::StatusOr<DeviceProfile> LoadDevice(const std::string& name_or_path);

// The text proto of a profile (for `device show` and calibration output).
std::string DeviceProfileToText(const DeviceProfile& profile);

}  // namespace sparseflash
