// sparseflash device list|show.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/atomic_file.h"
#include "common/files.h"
#include "common/units.h"
#include "devices/device_catalog.h"
#include "engine/real/calibrate.h"
#include "tools/cli.h"

namespace sparseflash::cli {
namespace {

int RunList() {
  // Columns as wide as their longest entry.
  size_t name_w = 4, flash_w = 5;
  for (const DeviceProfile& d : BuiltinDevices().items()) {
    name_w = std::max(name_w, d.name.size());
    flash_w = std::max(flash_w, d.flash.interface.size());
  }
  const int nw = static_cast<int>(name_w), fw = static_cast<int>(flash_w);
  absl::PrintF("%-*s  %-*s  %5s  %10s  %s\n", nw, "name", fw, "flash", "cores", "app memory",
               "description");
  for (const DeviceProfile& d : BuiltinDevices().items()) {
    absl::PrintF("%-*s  %-*s  %5d  %10s  %s\n", nw, d.name, fw, d.flash.interface, d.total_cores(),
                 FormatBytes(d.dram.app_available_bytes), d.description);
  }
  return 0;
}

int RunShow(const std::string& name) {
  absl::StatusOr<DeviceProfile> d = LoadDevice(name);
  if (!d.ok()) return ReportError(d.status());
  std::cout << DeviceProfileToText(*d);
  return 0;
}

int RunCalibrate(const std::string& scratch, const std::string& read_file, const std::string& out,
                 bool quick, bool force) {
  if (scratch.empty() == read_file.empty()) {
    std::fprintf(stderr, "error: give one of --scratch DIR or --file FILE\n");
    return 2;
  }
  // The output is opened first, so a bad --out fails before minutes of measuring.
  absl::StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(out, {.overwrite = force});
  if (!file.ok()) return ReportError(file.status());
  CalibrateOptions o{
      .scratch_dir = scratch,
      .read_file = read_file,
      .quick = quick,
      .progress = [](const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); }};
  absl::StatusOr<DeviceProfile> d = CalibrateHost(o);
  if (!d.ok()) return ReportError(d.status());
  const std::string text = absl::StrCat("# Calibrated by sparseflash device calibrate",
                                        quick ? " --quick" : "", "\n", DeviceProfileToText(*d));
  absl::Status s = (*file)->Write(text);
  if (s.ok()) s = (*file)->Commit();
  if (!s.ok()) return ReportError(s);
  std::fprintf(stderr, "wrote %s\n", out.c_str());
  return 0;
}

}  // namespace

void AddDeviceCommands(CLI::App& app, Dispatch& dispatch) {
  CLI::App* device = app.add_subcommand("device", "Device profiles: flash curves, cores, DRAM");
  device->require_subcommand(1);
  device->add_subcommand("list", "List bundled device profiles")->callback([&dispatch] {
    dispatch.action = RunList;
  });
  auto name = std::make_shared<std::string>();
  CLI::App* show = device->add_subcommand("show", "Print a profile with every number's source");
  show->add_option("name", *name, "Catalog name or profile .textproto")->required();
  show->callback([&dispatch, name] { dispatch.action = [name] { return RunShow(*name); }; });
  struct CalibrateArgs {
    std::string scratch, read_file, out;
    bool quick = false, force = false;
  };
  auto c = std::make_shared<CalibrateArgs>();
  CLI::App* cal = device->add_subcommand(
      "calibrate", "Measure this machine (flash by size and depth, DRAM, kernels) into a profile");
  cal->add_option("--scratch", c->scratch,
                  "Directory on the storage to measure: a scratch file is written there, read "
                  "(O_DIRECT) and removed");
  cal->add_option("--file", c->read_file,
                  "Or measure reads of this existing file (at least 256 MiB; only read), e.g. "
                  "the weight file runs will read, where the storage caches what was read "
                  "before (a virtual disk)");
  cal->add_option("--out", c->out, "Profile .textproto to write")->required();
  cal->add_flag("--quick", c->quick,
                "Fewer points, no wide-span kernel rates and a 1 GiB scratch file (under 30 s); "
                "replay predictions are less exact than with the full calibration");
  cal->add_flag("--force", c->force, "Replace an existing profile");
  cal->callback([&dispatch, c] {
    dispatch.action = [c] {
      return RunCalibrate(c->scratch, c->read_file, c->out, c->quick, c->force);
    };
  });
}

}  // namespace sparseflash::cli
