// Damaged trace files give errors naming the file, token and layer; they never
// crash, hang or allocate without bound.
#include <filesystem>
#include <fstream>
#include <cstring>
#include <sstream>

#include "gtest/gtest.h"
#include "traces/test_util.h"
#include "traces/trace.pb.h"
#include "traces/trace_format.h"
#include "traces/trace_reader.h"
#include "zstd.h"

namespace sparseflash {
namespace {

using testing::DenseToken;
using testing::TempPath;
using testing::TinyHeader;
using testing::WriteTrace;

std::string Bytes(const std::string& path) { return testing::FileBytes(path); }

void Put(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Reads the whole file; returns the first error (or OK).
absl::Status ReadStatus(const std::string& path) {
  auto reader = TraceReader::Open(path);
  if (!reader.ok()) return reader.status();
  return ForEachToken(**reader, [](const TokenActivations&) {});
}

std::string GoodTrace(const std::string& name) {
  std::string path = TempPath(name);
  std::vector<TokenActivations> tokens;
  for (uint64_t t = 0; t < 50; ++t) tokens.push_back(DenseToken(t, {{1, 2, 3}, {4, 5}}));
  EXPECT_TRUE(WriteTrace(path, TinyHeader(2, 10), tokens).ok());
  return path;
}

// A file with one frame holding `records` (already serialized TokenRecords).
std::string CraftedTrace(const std::string& name, const std::vector<proto::TokenRecord>& records,
                         uint64_t tokens) {
  std::string path = TempPath(name);
  auto writer = TraceWriter::Create(path, TinyHeader(2, 10));
  EXPECT_TRUE(writer.ok());
  EXPECT_TRUE((*writer)->Finish().ok());
  // Rebuild with hand-made records: header from the writer, frame by hand.
  std::string bytes = Bytes(path);
  proto::TraceHeader header;
  uint32_t len;
  std::memcpy(&len, bytes.data() + 12, 4);
  header.ParseFromString(bytes.substr(16, len));
  header.set_tokens(tokens);
  std::string body = header.SerializeAsString();
  std::string out = bytes.substr(0, 12);
  uint32_t n = body.size();
  out.append(reinterpret_cast<char*>(&n), 4);
  out += body;
  std::string raw;
  for (const auto& r : records) {
    std::string s = r.SerializeAsString();
    raw.push_back(static_cast<char>(s.size()));
    raw += s;
  }
  std::string frame(ZSTD_compressBound(raw.size()), '\0');
  size_t c = ZSTD_compress(frame.data(), frame.size(), raw.data(), raw.size(), 1);
  uint32_t sizes[2] = {static_cast<uint32_t>(c), static_cast<uint32_t>(raw.size())};
  out.append(reinterpret_cast<char*>(sizes), 8);
  out.append(frame.data(), c);
  Put(path, out);
  return path;
}

// A record listing `layers` in that order, `deltas` in layer `with` (expert 0).
proto::TokenRecord Listing(uint64_t token, const std::vector<uint32_t>& layers, uint32_t with,
                           const std::vector<uint32_t>& deltas) {
  proto::TokenRecord r;
  r.set_token(token);
  for (uint32_t layer : layers) {
    auto* l = r.add_layers();
    l->set_layer(layer);
    auto* e = l->add_experts();
    if (layer == with) {
      for (uint32_t d : deltas) e->add_active_delta(d);
    }
  }
  return r;
}

// A well-formed listing of the toy model's two layers.
proto::TokenRecord Record(uint64_t token, uint32_t layer, const std::vector<uint32_t>& deltas) {
  return Listing(token, {0, 1}, layer, deltas);
}

void ExpectError(const absl::Status& s, const std::vector<std::string>& words) {
  ASSERT_FALSE(s.ok());
  for (const std::string& w : words) {
    EXPECT_NE(s.message().find(w), std::string::npos) << s.message() << " lacks " << w;
  }
}

TEST(TraceDamage, GoodTraceReads) { EXPECT_TRUE(ReadStatus(GoodTrace("good.trace")).ok()); }

TEST(TraceDamage, WrongMagic) {
  std::string path = GoodTrace("magic.trace");
  std::string b = Bytes(path);
  b[0] = 'X';
  Put(path, b);
  ExpectError(ReadStatus(path), {path, "magic"});
}

TEST(TraceDamage, WrongVersion) {
  std::string path = GoodTrace("version.trace");
  std::string b = Bytes(path);
  b[8] = 99;
  Put(path, b);
  ExpectError(ReadStatus(path), {path, "version 99"});
}

TEST(TraceDamage, TruncatedAnywhere) {
  std::string path = GoodTrace("trunc.trace");
  std::string b = Bytes(path);
  for (size_t cut : {size_t{5}, size_t{14}, b.size() / 2, b.size() - 1}) {
    Put(path, b.substr(0, cut));
    absl::Status s = ReadStatus(path);
    EXPECT_FALSE(s.ok()) << "cut at " << cut;
    EXPECT_NE(s.message().find(path), std::string::npos);
  }
}

TEST(TraceDamage, CorruptZstdFrame) {
  std::string path = GoodTrace("zstd.trace");
  std::string b = Bytes(path);
  b[b.size() - 6] ^= 0x5a;  // inside the compressed data / checksum
  Put(path, b);
  ExpectError(ReadStatus(path), {path, "token 0", "corrupt zstd frame"});
}

TEST(TraceDamage, HugeFrameSizeIsRejectedNotAllocated) {
  std::string path = GoodTrace("huge.trace");
  std::string b = Bytes(path);
  uint32_t len;
  std::memcpy(&len, b.data() + 12, 4);
  uint32_t huge = 0xfffffff0u;
  std::memcpy(b.data() + 16 + len, &huge, 4);
  Put(path, b);
  ExpectError(ReadStatus(path), {path, "64 MiB"});
}

TEST(TraceDamage, NeuronIdOutOfRange) {
  std::string path = CraftedTrace("range.trace", {Record(0, 1, {3, 9})}, 1);
  ExpectError(ReadStatus(path), {path, "token 0", "layer 1", "neuron id 12", "out of range"});
}

TEST(TraceDamage, LayerTheModelLacks) {
  std::string path = CraftedTrace("layer.trace", {Listing(0, {0, 7}, 7, {1})}, 1);
  ExpectError(ReadStatus(path), {path, "token 0", "layer 7", "where layer 1 was expected"});
}

// A token lists every layer, in order: strategies index layers by number.
TEST(TraceDamage, MissingLayer) {
  std::string path = CraftedTrace("missing.trace", {Listing(0, {1}, 1, {1})}, 1);
  ExpectError(ReadStatus(path), {path, "token 0", "1 layers", "has 2", "every layer"});
}

TEST(TraceDamage, LayersOutOfOrder) {
  std::string path = CraftedTrace("swapped.trace", {Listing(0, {1, 0}, 0, {1})}, 1);
  ExpectError(ReadStatus(path), {path, "token 0", "layer 1", "where layer 0 was expected"});
}

TEST(TraceDamage, ExpertTwice) {
  proto::TokenRecord r = Record(0, 0, {1});
  r.mutable_layers(0)->add_experts()->set_expert(0);
  std::string path = CraftedTrace("expert.trace", {r}, 1);
  ExpectError(ReadStatus(path), {path, "layer 0", "2 experts"});
}

TEST(TraceDamage, HugeShapeInTheHeaderIsRejected) {
  std::string path = GoodTrace("shape.trace");
  std::string b = Bytes(path);
  uint32_t len;
  std::memcpy(&len, b.data() + 12, 4);
  proto::TraceHeader header;
  ASSERT_TRUE(header.ParseFromString(b.substr(16, len)));
  header.mutable_model()->set_d_ffn(1 << 30);
  header.mutable_model()->set_experts(64);
  std::string body = header.SerializeAsString();
  std::string out = b.substr(0, 12);
  uint32_t n = body.size();
  out.append(reinterpret_cast<char*>(&n), 4);
  out += body + b.substr(16 + len);
  Put(path, out);
  ExpectError(ReadStatus(path), {path, "invalid model shape", "d_ffn 1073741824"});
}

TEST(TraceDamage, RepeatedIds) {
  std::string path = CraftedTrace("repeat.trace", {Record(0, 0, {1, 0})}, 1);
  ExpectError(ReadStatus(path), {path, "layer 0", "repeat"});
}

TEST(TraceDamage, TokensOutOfOrder) {
  std::string path = CraftedTrace("order.trace", {Record(0, 0, {1}), Record(5, 0, {1})}, 2);
  ExpectError(ReadStatus(path), {path, "token 1", "out of order"});
}

TEST(TraceDamage, FewerTokensThanHeader) {
  std::string path = CraftedTrace("short.trace", {Record(0, 0, {1})}, 3);
  ExpectError(ReadStatus(path), {path, "header says 3 tokens"});
}

TEST(TraceDamage, MissingFile) {
  ExpectError(ReadStatus("/nonexistent/x.trace"), {"/nonexistent/x.trace", "cannot open"});
}

}  // namespace
}  // namespace sparseflash
