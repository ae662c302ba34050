// sparseflash device list|show.
#include <iostream>

#include "absl/strings/str_format.h"
#include "common/units.h"
#include "devices/device_catalog.h"
#include "tools/cli.h"

namespace sparseflash::cli {
namespace {

int RunList() {
  absl::PrintF("%-14s %-10s %-8s %-11s %s\n", "name", "flash", "cores", "app memory",
               "description");
  for (const DeviceProfile& d : BuiltinDevices().items()) {
    absl::PrintF("%-14s %-10s %-8d %-11s %s\n", d.name, d.flash.interface, d.total_cores(),
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
}

}  // namespace sparseflash::cli
