// Every command of the sparseflash binary given bad input: missing, empty and
// damaged files, folders where files belong, wrong types, numbers out of range,
// unknown names, missing or blocked output folders, and outputs that exist. Each
// case must end with an exit code in [1, 127] (no crash, no signal), a message
// naming the file or option at fault, and every good file written before it
// (trace, export, report, database, profile) byte-identical afterwards.
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/cli_runner.h"

namespace sparseflash {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A case: arguments with {placeholders} and words the error must contain.
struct Case {
  std::string args;
  std::vector<std::string> words;
};

class CliBadInput : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = ::testing::TempDir() + "/sf_bad_input_" + std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/folder");
    std::ofstream(dir_ + "/empty");
    std::ofstream(dir_ + "/garbage") << std::string(5000, 'x') << "\x01\x02 not a thing";
    std::ofstream(dir_ + "/bad.textproto") << "flash { points { request_bytes: -5 ";
    std::ofstream(dir_ + "/text.txt") << "A 0 0 1 2\nA 0 1 3\n";
    std::ofstream(dir_ + "/badtext.txt") << "A 0 0 1 2\nA 0 9 3\n";
    // oracleGeneral records (time, id, size, next): a zero size; two sizes.
    std::ofstream(dir_ + "/zero_size.og", std::ios::binary) << std::string(24, '\0');
    std::ofstream(dir_ + "/mixed_size.og", std::ios::binary)
        << OracleRecord(1, 8) << OracleRecord(2, 16);
    std::ofstream(dir_ + "/float.npy", std::ios::binary) << FloatNpy();
    std::ofstream(dir_ + "/sweep.textproto") << "grid { device: \"oneplus12\" model: "
                                                "\"turbosparse-mistral-7b\" strategy: "
                                                "\"powerinfer2\" ffn_resident: 0.5 }\n";
    std::ofstream(dir_ + "/sweep_badopt.textproto")
        << "grid { device: \"oneplus12\" model: \"turbosparse-mistral-7b\" strategy: "
           "\"powerinfer2\" ffn_resident: 0.5 option: \"bogus=1\" }\n";
    std::ofstream(dir_ + "/sweep_threads.textproto")
        << "grid { device: \"oneplus12\" model: \"turbosparse-mistral-7b\" strategy: "
           "\"powerinfer2\" ffn_resident: 0.5 threads: -3 }\n";
    std::ofstream(dir_ + "/sweep_device.textproto")
        << "grid { device: \"nosuchphone\" model: \"turbosparse-mistral-7b\" strategy: "
           "\"powerinfer2\" ffn_resident: 0.5 }\n";
    // Good outputs that bad commands must leave alone.
    Cli({"trace", "gen", "--model", "tinystories-relu-260k", "--tokens", "4", "--out",
         dir_ + "/good.trace"});
    Cli({"trace", "gen", "--model", "turbosparse-mistral-7b", "--tokens", "2", "--out",
         dir_ + "/mistral.trace"});
    Cli({"trace", "export", dir_ + "/good.trace", "--out", dir_ + "/good.txt"});
    Cli({"simulate", "--device", "oneplus12", "--model", "tinystories-relu-260k", "--strategy",
         "powerinfer2", "--ffn-resident", "0.5", "--tokens", "4", "--db", dir_ + "/good.db"});
    Cli({"report", "--db", dir_ + "/good.db", "--out", dir_ + "/report"});
    Cli({"weights", "make", "--model", "tinystories-relu-260k", "--out", dir_ + "/good.sfw"});
    Cli({"device", "show", "oneplus12"});  // a profile to keep: written below
    std::ofstream(dir_ + "/good.textproto") << "# kept\n";
    {
      std::string damaged = ReadAll(dir_ + "/good.trace");
      damaged.resize(damaged.size() - 9);
      std::ofstream(dir_ + "/damaged.trace", std::ios::binary) << damaged;
    }
    sqlite3* db = nullptr;  // a foreign SQLite database
    sqlite3_open((dir_ + "/foreign.db").c_str(), &db);
    sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    for (const char* f :
         {"good.trace", "good.txt", "good.db", "report/report.html", "report/runs.csv", "good.sfw",
          "good.textproto", "empty", "garbage", "foreign.db", "damaged.trace"}) {
      guarded_[f] = ReadAll(dir_ + "/" + f);
      ASSERT_FALSE(f != std::string("empty") && guarded_[f].empty()) << f << " was not written";
    }
  }

  static std::string OracleRecord(uint64_t id, uint32_t size) {
    std::string r(24, '\0');
    std::memcpy(r.data() + 4, &id, 8);
    std::memcpy(r.data() + 12, &size, 4);
    return r;
  }

  static std::string FloatNpy() {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 192), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string out("\x93NUMPY\x01\x00", 8);
    const uint16_t len = static_cast<uint16_t>(header.size());
    out.append(reinterpret_cast<const char*>(&len), 2);
    out += header;
    out += std::string(192 * 4, '\0');
    return out;
  }

  static void Cli(const std::vector<std::string>& args) {
    const testing::CliOutcome o = testing::RunCli(args, dir_);
    ASSERT_EQ(o.code, 0) << absl::StrJoin(args, " ") << "\n" << o.err;
  }

  // The files stay behind only when a case failed, to be looked at.
  static void TearDownTestSuite() {
    if (!::testing::UnitTest::GetInstance()->current_test_suite()->Failed()) {
      fs::remove_all(dir_);
    }
  }

  static std::vector<std::string> Expand(const std::string& text) {
    const std::string long_name(300, 'n');
    const std::string expanded = absl::StrReplaceAll(
        text, {{"{d}", dir_}, {"{long}", long_name}, {"{nodir}", dir_ + "/no/such/folder"}});
    std::vector<std::string> args;
    for (absl::string_view a : absl::StrSplit(expanded, ' ', absl::SkipEmpty())) {
      args.emplace_back(a);
    }
    return args;
  }

  static std::string dir_;
  static std::map<std::string, std::string> guarded_;
};

std::string CliBadInput::dir_;
std::map<std::string, std::string> CliBadInput::guarded_;

// Shorthands for the common prefixes.
const std::string kSim = "simulate --device oneplus12 --model turbosparse-mistral-7b --tokens 2 ";
const std::string kSimTiny =
    "simulate --device oneplus12 --model tinystories-relu-260k --tokens 2 --ffn-resident 0.5 ";
const std::string kReplay =
    "replay --device oneplus12 --model tinystories-relu-260k --weights {d}/good.sfw --tokens 2 ";
const std::string kGen = "trace gen --model tinystories-relu-260k --tokens 2 ";

const std::vector<Case>& Cases() {
  static const auto* cases = new std::vector<Case>{
      // trace gen
      {kGen + "--out {d}/good.trace", {"good.trace", "--force"}},
      {kGen + "--out {d}/folder", {"folder", "directory"}},
      {kGen + "--out {nodir}/x.trace", {"no/such/folder"}},
      {kGen + "--out {d}/good.txt/x.trace", {"good.txt"}},
      {"trace gen --model nosuch --out {d}/x.trace", {"nosuch", "known models"}},
      {"trace gen --model {long} --out {d}/x.trace", {"nnnnnnnn", "known models"}},
      {"trace gen --model {d}/folder --out {d}/x.trace", {"folder", "directory"}},
      {"trace gen --model {d}/empty --out {d}/x.trace", {"empty"}},
      {"trace gen --model {d}/garbage --out {d}/x.trace", {"garbage"}},
      {kGen + "--tokens -1 --out {d}/x.trace", {"--tokens"}},
      {kGen + "--tokens 0 --out {d}/x.trace", {"--tokens"}},
      {kGen + "--tokens abc --out {d}/x.trace", {"--tokens"}},
      {kGen + "--tokens 1e12 --out {d}/x.trace", {"--tokens"}},
      {kGen + "--seed -2 --out {d}/x.trace", {"--seed"}},
      {kGen + "--persistence -1 --out {d}/x.trace", {"--persistence"}},
      {kGen + "--persistence nan --out {d}/x.trace", {"--persistence"}},
      {kGen + "--coactivation 2 --out {d}/x.trace", {"--coactivation"}},
      {kGen + "--profile nosuch --out {d}/x.trace", {"nosuch"}},
      // trace stats
      {"trace stats {d}/missing.trace", {"missing.trace"}},
      {"trace stats {d}/empty", {"empty"}},
      {"trace stats {d}/folder", {"folder", "directory"}},
      {"trace stats {d}/garbage", {"garbage", "magic"}},
      {"trace stats {d}/damaged.trace", {"damaged.trace"}},
      {"trace stats {d}/text.txt", {"text.txt"}},
      // trace import
      {"trace import --model tinystories-relu-260k --text {d}/text.txt --out {d}/good.trace",
       {"good.trace", "--force"}},
      {"trace import --model nosuch --text {d}/text.txt --out {d}/x.trace", {"nosuch"}},
      {"trace import --model tinystories-relu-260k --text {d}/missing.txt --out {d}/x.trace",
       {"missing.txt"}},
      {"trace import --model tinystories-relu-260k --text {d}/folder --out {d}/x.trace",
       {"folder", "directory"}},
      {"trace import --model tinystories-relu-260k --text {d}/badtext.txt --out {d}/x.trace",
       {"badtext.txt:2", "layer 9"}},
      {"trace import --model tinystories-relu-260k --text {d}/garbage --out {d}/x.trace",
       {"garbage:1"}},
      {"trace import --model tinystories-relu-260k --out {d}/x.trace", {"--text", "--npy"}},
      {"trace import --model tinystories-relu-260k --npy {d}/float.npy {d}/float.npy "
       "{d}/float.npy {d}/float.npy --out {d}/x.trace",
       {"float.npy", "--threshold"}},
      {"trace import --model tinystories-relu-260k --npy {d}/garbage --out {d}/x.trace",
       {"4 layers"}},
      {"trace import --model tinystories-relu-260k --npy {d}/garbage {d}/garbage {d}/garbage "
       "{d}/garbage --out {d}/x.trace",
       {"garbage", "magic"}},
      {"trace import --model tinystories-relu-260k --npy {d}/float.npy {d}/float.npy "
       "{d}/float.npy {d}/float.npy --threshold -1 --out {d}/x.trace",
       {"--threshold"}},
      // trace export
      {"trace export {d}/damaged.trace --out {d}/good.txt", {"damaged.trace"}},
      {"trace export {d}/missing.trace --out {d}/x.txt", {"missing.trace"}},
      {"trace export {d}/good.trace --format oracle-general", {"--out"}},
      {"trace export {d}/good.trace --format oracle-general --set bogus --out {d}/x.og",
       {"--set", "bogus"}},
      {"trace export {d}/good.trace --format oracle-general --object-bytes 0 --out {d}/x.og",
       {"--object-bytes"}},
      {"trace export {d}/damaged.trace --format oracle-general --out {d}/x.og", {"damaged.trace"}},
      {"trace export {d}/good.trace --format oracle-general --out {nodir}/x.og",
       {"no/such/folder"}},
      {"trace export {d}/good.trace --format csv --out {d}/x.og", {"--format"}},
      // trace cachesim, trace synth-stream
      {"trace cachesim {d}/missing.og", {"missing.og"}},
      {"trace cachesim {d}/empty", {"empty", "oracleGeneral"}},
      {"trace cachesim {d}/garbage", {"garbage", "24-byte"}},
      {"trace cachesim {d}/folder", {"folder", "regular file"}},
      {"trace cachesim {d}/damaged.trace", {"damaged.trace"}},
      {"trace cachesim {d}/zero_size.og", {"zero_size.og", "record 0", "obj_size"}},
      {"trace cachesim {d}/mixed_size.og", {"mixed_size.og", "record 1", "obj_size 16"}},
      {"trace cachesim {d}/good.trace --size 150%", {"--size", "150%"}},
      {"trace cachesim {d}/good.trace --size 10G", {"--size", "10G"}},
      // a size's form is checked before the stream is read
      {"trace cachesim {d}/missing.og --size 10%,abc", {"--size", "abc"}},
      {"trace cachesim {d}/good.trace --policy bogus", {"--policy", "bogus"}},
      {"trace cachesim {d}/good.trace --set bogus", {"--set", "bogus"}},
      {"trace cachesim {d}/good.trace --object-bytes 0", {"--object-bytes"}},
      {"trace cachesim {d}/good.trace --repeat 0", {"--repeat"}},
      {"trace synth-stream --out {d}/s.og --active 0.9", {"active"}},
      {"trace synth-stream --out {d}/s.og --layers 0", {"layers"}},
      {"trace synth-stream --out {d}/s.og --zipf -1", {"zipf"}},
      {"trace synth-stream --tokens 2 --out {nodir}/s.og", {"no/such/folder"}},
      {"trace export {d}/good.trace --out {d}/folder", {"folder", "directory"}},
      {"trace export {d}/good.trace --out {nodir}/x.txt", {"no/such/folder"}},
      // model and device show
      {"model show nosuch", {"nosuch", "known models", ".textproto"}},
      {"model show {long}", {"nnnnnnnn"}},
      {"model show {d}/folder", {"folder", "directory"}},
      {"model show {d}/empty", {"empty"}},
      {"model show {d}/garbage", {"garbage"}},
      {"model show {d}/bad.textproto", {"bad.textproto"}},
      {"model show tinystories-relu-260k --quant int3", {"int3"}},
      {"device show nosuch", {"nosuch", "known devices", ".textproto"}},
      {"device show {long}", {"nnnnnnnn"}},
      {"device show {d}/folder", {"folder", "directory"}},
      {"device show {d}/empty", {"empty"}},
      {"device show {d}/garbage", {"garbage"}},
      {"device show {d}/bad.textproto", {"bad.textproto"}},
      // device calibrate: the output is checked before any measuring
      {"device calibrate --scratch {d} --out {d}/good.textproto", {"good.textproto", "--force"}},
      {"device calibrate --scratch {d} --out {nodir}/p.textproto", {"no/such/folder"}},
      {"device calibrate --scratch {nodir} --out {d}/p.textproto --quick", {"no/such/folder"}},
      {"device calibrate --scratch {d}/garbage --out {d}/p.textproto --quick", {"garbage"}},
      {"device calibrate --file {d}/garbage --out {d}/p.textproto --quick", {"garbage", "256 MiB"}},
      {"device calibrate --file {nodir}/w.sfw --out {d}/p.textproto --quick", {"no/such/folder"}},
      {"device calibrate --out {d}/p.textproto --quick", {"--scratch", "--file"}},
      {"device calibrate --scratch {d} --file {d}/garbage --out {d}/p.textproto", {"one of"}},
      // simulate
      {"simulate --device nosuch --model turbosparse-mistral-7b --ffn-resident 0.5",
       {"nosuch", "known devices"}},
      {"simulate --device {d}/folder --model turbosparse-mistral-7b --ffn-resident 0.5",
       {"folder", "directory"}},
      {"simulate --device {d}/empty --model turbosparse-mistral-7b --ffn-resident 0.5", {"empty"}},
      {"simulate --device {d}/garbage --model turbosparse-mistral-7b --ffn-resident 0.5",
       {"garbage"}},
      {"simulate --device {d}/bad.textproto --model turbosparse-mistral-7b --ffn-resident 0.5",
       {"bad.textproto"}},
      {"simulate --device {long} --model turbosparse-mistral-7b --ffn-resident 0.5", {"nnnnnnnn"}},
      {"simulate --device oneplus12 --model nosuch --ffn-resident 0.5", {"nosuch"}},
      {kSim + "--ffn-resident 0.5 --trace {d}/missing.trace", {"missing.trace"}},
      {kSim + "--ffn-resident 0.5 --trace {d}/folder", {"folder", "directory"}},
      {kSim + "--ffn-resident 0.5 --trace {d}/empty", {"empty"}},
      {kSim + "--ffn-resident 0.5 --trace {d}/damaged.trace", {"damaged.trace"}},
      {kSim + "--ffn-resident 0.5 --trace {d}/good.trace", {"good.trace", "tinystories"}},
      {kSim + "--ffn-resident 0.5 --strategy nosuch", {"nosuch", "known strategies"}},
      {kSim + "--ffn-resident 0.5 --policy nosuch", {"nosuch"}},
      {kSim + "--memory 10G", {"10G", "GiB"}},
      {kSim + "--memory 1e30", {"1e30"}},
      {kSim + "--memory -1GB", {"-1GB"}},
      {kSim + "--memory 100MB", {"100", "resident"}},
      {kSim + "--ffn-resident 2", {"--ffn-resident"}},
      {kSim + "--ffn-resident nan", {"--ffn-resident"}},
      {kSim, {"--memory", "--ffn-resident"}},
      {kSim + "--ffn-resident 0.5 --threads -3", {"--threads"}},
      {kSim + "--ffn-resident 0.5 --threads 0", {"--threads"}},
      {kSim + "--ffn-resident 0.5 --threads abc", {"--threads"}},
      {kSim + "--ffn-resident 0.5 --tokens 0", {"--tokens"}},
      {kSim + "--ffn-resident 0.5 --prompt-tokens -5", {"--prompt-tokens"}},
      {kSim + "--ffn-resident 0.5 --option bogus=1", {"bogus"}},
      {kSim + "--ffn-resident 0.5 --option io_depth=0", {"io_depth"}},
      {kSim + "--ffn-resident 0.5 --option hot_share=nan", {"hot_share"}},
      {kSim + "--ffn-resident 0.5 --option noequals", {"noequals"}},
      // Every bad value at once, each under its key.
      {kSim + "--ffn-resident 0.5 --option pipeline=foo --option layout=x --option attention=z",
       {"strategy powerinfer2, 3 bad options:", "pipeline: unknown pipeline 'foo'",
        "layout: unknown layout 'x'", "attention: 'z' is not one of dram, flash"}},
      {kSim + "--ffn-resident 0.5 --strategy llmflash --option attention=z",
       {"strategy llmflash", "attention: 'z'"}},
      {kSimTiny + "--chrome-trace {nodir}/t.json", {"no/such/folder"}},
      {kSimTiny + "--chrome-trace {d}/folder", {"folder"}},
      {kSimTiny + "--db {d}/folder", {"folder", "directory"}},
      {kSimTiny + "--db {d}/foreign.db", {"foreign.db", "not a sparseflash results database"}},
      {kSimTiny + "--db {d}/garbage", {"garbage"}},
      {kSimTiny + "--db {nodir}/r.db", {"no/such/folder"}},
      // weights make
      {"weights make --model tinystories-relu-260k --out {d}/good.sfw", {"good.sfw", "--force"}},
      {"weights make --model nosuch --out {d}/x.sfw", {"nosuch"}},
      {"weights make --model tinystories-relu-260k --out {nodir}/x.sfw", {"no/such/folder"}},
      {"weights make --model tinystories-relu-260k --out {d}/folder", {"folder", "directory"}},
      {"weights make --model tinystories-relu-260k --layout nosuch --out {d}/x.sfw", {"nosuch"}},
      {"weights make --model tinystories-relu-260k --quant int3 --out {d}/x.sfw", {"int3"}},
      // replay
      {"replay --device oneplus12 --model tinystories-relu-260k --weights {d}/missing.sfw "
       "--ffn-resident 0.5 --tokens 2",
       {"missing.sfw"}},
      {"replay --device oneplus12 --model tinystories-relu-260k --weights {d}/garbage "
       "--ffn-resident 0.5 --tokens 2",
       {"garbage"}},
      {"replay --device oneplus12 --model tinystories-relu-260k --weights {d}/folder "
       "--ffn-resident 0.5 --tokens 2",
       {"folder", "directory"}},
      {"replay --device oneplus12 --model turbosparse-mistral-7b --weights {d}/good.sfw "
       "--ffn-resident 0.5 --tokens 2",
       {"good.sfw", "header.model", "tinystories-relu-260k"}},
      {kReplay + "--ffn-resident 0.5 --quant int4-g32", {"good.sfw", "int8-g64", "int4-g32"}},
      {"replay --device nosuch --model tinystories-relu-260k --weights {d}/good.sfw "
       "--ffn-resident 0.5",
       {"nosuch"}},
      {kReplay + "--memory 10KB", {"10", "resident"}},
      {kReplay + "--ffn-resident 0.5 --io nosuch", {"nosuch"}},
      {kReplay + "--ffn-resident 0.5 --recheck-compute", {"--device", "oneplus12", "soc"}},
      {kReplay + "--memory 100MB --recheck-compute", {"--recheck-compute", "--memory", "budget"}},
      {kReplay + "--ffn-resident 0.5 --recheck-storage", {"oneplus12", "flash.points", "O_DIRECT"}},
      {kReplay + "--memory 100MB --recheck-storage", {"--recheck-storage", "--memory", "budget"}},
      {kReplay + "--ffn-resident 0.5 --db {d}/foreign.db", {"foreign.db"}},
      // sweep
      {"sweep --config {d}/missing.textproto --db {d}/s.db", {"missing.textproto"}},
      {"sweep --config {d}/folder --db {d}/s.db", {"folder", "directory"}},
      {"sweep --config {d}/empty --db {d}/s.db", {"empty", "no grid"}},
      {"sweep --config {d}/garbage --db {d}/s.db", {"garbage"}},
      {"sweep --config {d}/sweep_badopt.textproto --db {d}/s.db", {"grid 1", "bogus"}},
      {"sweep --config {d}/sweep_threads.textproto --db {d}/s.db", {"grid 1", "threads"}},
      {"sweep --config {d}/sweep_device.textproto --db {d}/s.db", {"grid 1", "nosuchphone"}},
      {"sweep --config {d}/sweep.textproto --db {d}/folder", {"folder", "directory"}},
      {"sweep --config {d}/sweep.textproto --db {d}/foreign.db", {"foreign.db"}},
      {"sweep --config {d}/sweep.textproto --db {d}/garbage", {"garbage"}},
      {"sweep --config {d}/sweep.textproto --db {d}/s.db --shard 3/2", {"3/2"}},
      {"sweep --config {d}/sweep.textproto --db {d}/s.db --shard abc", {"abc"}},
      {"sweep --config {d}/sweep.textproto --db {d}/s.db --jobs 0", {"--jobs"}},
      {"sweep --config {d}/sweep.textproto", {"--db"}},
      // validate: the catalogs and the database are checked before any entry runs
      {"validate --only nosuch", {"--only", "nosuch", "groups"}},
      {"validate --catalog {d}/missing.textproto", {"missing.textproto"}},
      {"validate --catalog {d}/folder", {"folder", "directory"}},
      {"validate --catalog {d}/empty", {"empty", "no entry"}},
      {"validate --catalog {d}/garbage", {"garbage"}},
      {"validate --only a-lf-table2-naive --db {d}/folder", {"folder", "directory"}},
      {"validate --only a-lf-table2-naive --db {d}/garbage", {"garbage"}},
      {"validate --only a-lf-table2-naive --db {d}/foreign.db", {"foreign.db"}},
      {"validate --jobs 0", {"--jobs"}},
      // db merge
      {"db merge {d}/m.db {d}/missing.db", {"missing.db"}},
      {"db merge {d}/m.db {d}/garbage", {"garbage"}},
      {"db import --llama-bench {d}/garbage --db {d}/i.db --device host --model mistral-7b",
       {"garbage", "llama-bench -o json"}},
      {"db import --llama-bench {d}/missing.json --db {d}/i.db --device host --model mistral-7b",
       {"missing.json"}},
      {"db import --llama-bench {d}/garbage --db {d}/i.db --device host --model nosuch",
       {"nosuch"}},
      {"db merge {d}/m.db {d}/empty", {"empty"}},
      {"db merge {d}/m.db {d}/foreign.db", {"foreign.db", "not a sparseflash results database"}},
      {"db merge {d}/good.db {d}/good.db", {"good.db", "output"}},
      {"db merge {d}/folder {d}/good.db", {"folder", "directory"}},
      {"db merge {d}/garbage {d}/good.db", {"garbage"}},
      // report
      {"report --db {d}/missing.db --out {d}/report", {"missing.db"}},
      {"report --db {d}/empty --out {d}/report", {"empty"}},
      {"report --db {d}/garbage --out {d}/report", {"garbage"}},
      {"report --db {d}/foreign.db --out {d}/report", {"foreign.db"}},
      {"report --db {d}/folder --out {d}/report", {"folder", "directory"}},
      {"report --db {d}/good.db --out {d}/good.txt", {"good.txt"}},
      // generate and trace record (the real TinyStories model)
      {"generate --model-file {d}/missing.bin --tokens 4", {"missing.bin"}},
      {"generate --model-file {d}/garbage --tokens 4", {"garbage"}},
      {"generate --model-file {d}/folder --tokens 4", {"folder", "directory"}},
      {"generate --tokenizer {d}/garbage --tokens 4", {"garbage"}},
      {"generate --tokens 0", {"--tokens"}},
      {"generate --memory 12Q --tokens 4", {"12Q"}},
      {"generate --ffn-resident 7 --tokens 4", {"--ffn-resident"}},
      {"generate --strategy nosuch --tokens 4", {"nosuch"}},
      {"generate --scratch {nodir} --tokens 4", {"no/such/folder"}},
      {"trace record --tokens 4 --out {d}/good.trace", {"good.trace", "--force"}},
      {"trace record --tokens 4 --out {nodir}/r.trace", {"no/such/folder"}},
      // demo
      {"demo --out {d}/garbage --no-replay", {"garbage"}},
      {"demo --jobs 0", {"--jobs"}},
      // usage
      {"nosuchcommand", {"nosuchcommand"}},
      {kSim + "--ffn-resident 0.5 --nosuchflag", {"--nosuchflag"}},
  };
  return *cases;
}

// Replay reads its weight file once before the run, after its own checks: a
// run they refuse does not announce the read; a run they pass does.
TEST_F(CliBadInput, ReplayAnnouncesTheWeightReadOnlyAfterItsChecks) {
  const std::string announce = "once before the run";
  const testing::CliOutcome refused = testing::RunCli(Expand(kReplay + "--memory 10KB"), dir_);
  EXPECT_GE(refused.code, 1);
  EXPECT_EQ(refused.err.find(announce), std::string::npos) << refused.err;
  const testing::CliOutcome ran = testing::RunCli(Expand(kReplay + "--ffn-resident 0.5"), dir_);
  ASSERT_EQ(ran.code, 0) << ran.err;
  EXPECT_NE(ran.err.find(announce), std::string::npos) << ran.err;
}

// A trace generated with another model's profile says so in its provenance,
// and a run refuses to rank its hot neurons by the model's own generator.
TEST_F(CliBadInput, ATraceOfABorrowedProfileIsNamedAndNeedsItsOwnOfflineProfile) {
  const testing::CliOutcome made = testing::RunCli(
      Expand("trace gen --model bamboo-7b --profile turbosparse-mistral-7b --tokens 2 --out "
             "{d}/borrowed.trace --force"),
      dir_);
  ASSERT_EQ(made.code, 0) << made.err;
  EXPECT_NE(made.err.find("profile drelu of turbosparse-mistral-7b"), std::string::npos)
      << made.err;
  const testing::CliOutcome refused = testing::RunCli(
      Expand("simulate --device oneplus12 --model bamboo-7b --trace {d}/borrowed.trace "
             "--ffn-resident 0.5 --tokens 2"),
      dir_);
  EXPECT_GE(refused.code, 1) << refused.err;
  EXPECT_NE(refused.err.find("borrowed.trace"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("another profile"), std::string::npos) << refused.err;
  const testing::CliOutcome stats = testing::Shell(
      testing::CliCommandLine(absl::StrCat("trace stats ", dir_, "/borrowed.trace")));
  ASSERT_EQ(stats.code, 0);
  EXPECT_NE(stats.out.find("generator profile drelu of turbosparse-mistral-7b"), std::string::npos)
      << stats.out;
}

// A validate command refused for its arguments leaves no database behind.
TEST_F(CliBadInput, ARefusedValidateCreatesNoDatabase) {
  const testing::CliOutcome o =
      testing::RunCli(Expand("validate --only nosuch --db {d}/never.db"), dir_);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("nosuch"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ + "/never.db")) << "created by a refused command";
}

TEST_F(CliBadInput, EveryCaseFailsCleanlyNamesTheCulpritAndKeepsGoodFiles) {
  int checked = 0;
  for (const Case& c : Cases()) {
    const std::vector<std::string> args = Expand(c.args);
    const testing::CliOutcome o = testing::RunCli(args, dir_);
    SCOPED_TRACE(c.args);
    EXPECT_GE(o.code, 1) << "accepted: " << c.args;
    EXPECT_LT(o.code, 128) << "crashed (signal " << o.code - 128 << "):\n" << o.err;
    for (const std::string& w : c.words) {
      const std::string want = absl::StrReplaceAll(w, {{"{d}", dir_}});
      EXPECT_NE(o.err.find(want), std::string::npos) << "no '" << want << "' in:\n" << o.err;
    }
    for (const auto& [file, bytes] : guarded_) {
      EXPECT_EQ(ReadAll(dir_ + "/" + file), bytes) << file << " changed";
    }
    EXPECT_FALSE(fs::exists(dir_ + "/empty-wal")) << "an input was switched to WAL";
    ++checked;
  }
  RecordProperty("cases", checked);
  EXPECT_GE(checked, 140);
}

}  // namespace
}  // namespace sparseflash
