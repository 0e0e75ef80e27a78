#include "exec/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "exec/raw_weights.h"
#include "exec/weight_source.h"
#include "tests/exec/exec_test_util.h"

namespace moesim::exec {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::safetensors_bytes;
using testing::TempDir;
using testing::write_bytes;

std::vector<uint8_t> le_bytes(std::initializer_list<uint32_t> words, size_t width) {
  std::vector<uint8_t> out;
  for (uint32_t w : words)
    for (size_t i = 0; i < width; ++i) out.push_back(static_cast<uint8_t>(w >> (8 * i)));
  return out;
}

std::string parse_error(const std::string& header, const std::vector<uint8_t>& data) {
  const auto bytes = safetensors_bytes(header, data);
  try {
    parse_safetensors(bytes.data(), bytes.size(), "bad.safetensors");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Safetensors, ParsesDtypesShapesOffsetsAndMetadata) {
  // Header listed out of data order on purpose: tensors come back ordered by data offset.
  const std::string h =
      R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[6,14]},"__metadata__":{"k":"v"},)"
      R"("a":{"dtype":"BF16","shape":[3],"data_offsets":[0,6]},"c":{"dtype":"F16","shape":[1],"data_offsets":[14,16]},)"
      R"("i":{"dtype":"I64","shape":[],"data_offsets":[16,24]}})";
  std::vector<uint8_t> data = le_bytes({0x3F80, 0x4000, 0xBF80}, 2);
  auto f = le_bytes({0x3F800000u, 0x3F818000u}, 4);  // 1.0f, and a value that rounds up to 0x3F82
  data.insert(data.end(), f.begin(), f.end());
  auto h16 = le_bytes({0x3C00}, 2);  // 1.0 in F16
  data.insert(data.end(), h16.begin(), h16.end());
  data.insert(data.end(), 8, 0);
  const auto bytes = safetensors_bytes(h, data);
  const SafetensorsImage img = parse_safetensors(bytes.data(), bytes.size(), "t.safetensors");
  ASSERT_EQ(img.tensors.size(), 4u);
  EXPECT_EQ(img.tensors[0].name, "a");
  EXPECT_EQ(img.tensors[1].name, "b");
  EXPECT_EQ(img.tensors[2].name, "c");
  EXPECT_EQ(img.tensors[3].name, "i");
  EXPECT_EQ(img.metadata["k"], "v");
  EXPECT_EQ(img.data_start, 8 + h.size());
  EXPECT_EQ(img.tensors[1].file_offset, img.data_start + 6);
  EXPECT_EQ(img.tensors[1].shape, std::vector<uint64_t>{2});
  EXPECT_FALSE(img.tensors[3].dtype.has_value());
  EXPECT_TRUE(img.tensors[3].shape.empty());
  EXPECT_EQ(img.tensors[3].elements, 1u);

  std::vector<uint16_t> out(3);
  tensor_to_bf16(img.tensors[0], out.data());
  EXPECT_EQ(out, (std::vector<uint16_t>{0x3F80, 0x4000, 0xBF80}));
  tensor_to_bf16(img.tensors[1], out.data());
  EXPECT_EQ(out[0], 0x3F80);
  EXPECT_EQ(out[1], 0x3F82);
  tensor_to_bf16(img.tensors[2], out.data());
  EXPECT_EQ(out[0], 0x3F80);
  EXPECT_THROW(tensor_to_bf16(img.tensors[3], out.data()), Error);
}

TEST(Safetensors, ShortFileAndHeaderLengthErrors) {
  const std::vector<uint8_t> tiny = {1, 2, 3};
  EXPECT_THROW(parse_safetensors(tiny.data(), tiny.size(), "x"), Error);
  auto bytes = safetensors_bytes("{}", {});
  bytes[0] = 200;  // header length past the end of the file
  try {
    parse_safetensors(bytes.data(), bytes.size(), "long.safetensors");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("long.safetensors"), HasSubstr("at byte 0"), HasSubstr("exceeds")));
  }
}

TEST(Safetensors, EveryMalformedHeaderIsRejectedNamingFileAndTensor) {
  const std::vector<uint8_t> d4(4, 0);
  struct Case {
    std::string header, expect;
  };
  const std::vector<Case> cases = {
      {R"({"a":)", "invalid JSON"},
      {R"([1,2])", "not a JSON object"},
      {R"({"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})",
       "tensor 'a': appears twice"},
      {R"({"a":5})", "tensor 'a': entry is not an object"},
      {R"({"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4],"x":1}})", "tensor 'a': unknown field 'x'"},
      {R"({"a":{"shape":[2],"data_offsets":[0,4]}})", "tensor 'a': missing or non-string 'dtype'"},
      {R"({"a":{"dtype":"F99","shape":[2],"data_offsets":[0,4]}})", "tensor 'a': unknown dtype 'F99'"},
      {R"({"a":{"dtype":"BF16","shape":2,"data_offsets":[0,4]}})",
       "tensor 'a': missing or non-array 'shape'"},
      {R"({"a":{"dtype":"BF16","shape":[-2],"data_offsets":[0,4]}})", "tensor 'a': shape entries"},
      {R"({"a":{"dtype":"BF16","shape":[1.5],"data_offsets":[0,4]}})", "tensor 'a': shape entries"},
      {R"({"a":{"dtype":"BF16","shape":[4294967296,4294967296],"data_offsets":[0,4]}})",
       "tensor 'a': shape overflows"},
      {R"({"a":{"dtype":"BF16","shape":[2],"data_offsets":[0]}})", "tensor 'a': 'data_offsets' must be"},
      {R"({"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,-4]}})",
       "tensor 'a': data_offsets must be non-negative"},
      {R"({"a":{"dtype":"BF16","shape":[0],"data_offsets":[4,0]}})",
       "tensor 'a': data_offsets begin 4 > end 0"},
      {R"({"a":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}})", "tensor 'a': data [0, 8) extends past"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "tensor 'a': data is 4 bytes but shape"},
      {R"({"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"BF16","shape":[1],"data_offsets":[2,4]}})",
       "tensor 'b': data overlaps tensor 'a'"},
      {R"({"__metadata__":{"k":1}})", "__metadata__.k: is not a string"},
      {R"({"__metadata__":[]})", "__metadata__: is not an object"},
      {R"({"":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})", "empty tensor name"},
  };
  for (const auto& c : cases) {
    const std::string msg = parse_error(c.header, d4);
    EXPECT_THAT(msg, AllOf(HasSubstr("bad.safetensors: at byte"), HasSubstr(c.expect))) << c.header;
  }
  // The byte offset of a data error points at the tensor's data.
  const std::string h = R"({"a":{"dtype":"BF16","shape":[4],"data_offsets":[2,10]}})";
  EXPECT_THAT(parse_error(h, d4), HasSubstr("at byte " + std::to_string(8 + h.size() + 2)));
}

TEST(Safetensors, WriterRoundTripsAndLeavesNoFileOnError) {
  TempDir dir("st_writer");
  const std::string path = dir.file("w.safetensors");
  {
    SafetensorsWriter w(path, {{"x", DType::BF16, {2, 2}}, {"y", DType::F32, {1}}, {"z", DType::BF16, {0}}},
                        {{"a", "b"}});
    const uint16_t x[4] = {1, 2, 3, 4};
    const float y = 2.5f;
    w.write(x, 4);  // partial writes of one tensor are fine
    w.write(reinterpret_cast<const uint8_t*>(x) + 4, 4);
    w.write(&y, 4);
    w.commit();
  }
  const WeightSource ws = WeightSource::open(path);
  ASSERT_EQ(ws.tensors().size(), 3u);
  EXPECT_EQ(ws.metadata()["a"], "b");
  EXPECT_EQ(ws.find("x")->shape, (std::vector<uint64_t>{2, 2}));
  EXPECT_EQ(ws.find("y")->dtype, DType::F32);
  EXPECT_EQ(ws.find("x")->file_offset % 8, 0u);  // header padded so data is 8-byte aligned
  const std::string bad = dir.file("bad.safetensors");
  {
    SafetensorsWriter w(bad, {{"x", DType::BF16, {2}}}, Json::object());
    const uint16_t one = 1;
    w.write(&one, 2);
    EXPECT_THROW(w.commit(), Error);
    EXPECT_THROW(w.write("abcdef", 6), Error);
  }
  EXPECT_FALSE(std::filesystem::exists(bad));
}

TEST(WeightSource, ShardedCheckpointWithIndex) {
  TempDir dir("st_sharded");
  {
    SafetensorsWriter a(dir.file("model-00001-of-00002.safetensors"), {{"t1", DType::BF16, {2}}},
                        Json::object());
    const uint16_t v[2] = {0x3F80, 0x4000};
    a.write(v, 4);
    a.commit();
    SafetensorsWriter b(dir.file("model-00002-of-00002.safetensors"), {{"t2", DType::BF16, {1}}},
                        Json::object());
    b.write(v, 2);
    b.commit();
  }
  const std::string idx = dir.file("model.safetensors.index.json");
  auto write_index = [&](const std::string& text) {
    write_bytes(idx, std::vector<uint8_t>(text.begin(), text.end()));
  };
  write_index(
      R"({"metadata":{},"weight_map":{"t1":"model-00001-of-00002.safetensors","t2":"model-00002-of-00002.safetensors"}})");
  std::string folder = std::filesystem::path(idx).parent_path().string();
  const WeightSource w = WeightSource::open(folder);
  EXPECT_EQ(w.format(), "safetensors-sharded");
  ASSERT_EQ(w.tensors().size(), 2u);
  EXPECT_EQ(w.tensors()[0].name, "t1");
  EXPECT_EQ(w.total_elements(), 3u);
  EXPECT_EQ(WeightSource::open(idx).tensors().size(), 2u);

  auto err = [&](const std::string& text) {
    write_index(text);
    try {
      WeightSource::open(folder);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_THAT(
      err(R"({"weight_map":{"t1":"model-00001-of-00002.safetensors","t2":"model-00001-of-00002.safetensors"}})"),
      HasSubstr("lists tensor 't2'"));
  EXPECT_THAT(
      err(R"({"weight_map":{"t1":"model-00001-of-00002.safetensors","t2":"model-00002-of-00002.safetensors","t3":"model-00002-of-00002.safetensors"}})"),
      HasSubstr("lists tensor 't3'"));
  EXPECT_THAT(err(R"({"weight_map":{"t1":"../x.safetensors"}})"), HasSubstr("not a plain file name"));
  EXPECT_THAT(err(R"({"weight_map":{"t1":"missing.safetensors"}})"),
              HasSubstr("missing.safetensors: cannot open"));
  EXPECT_THAT(err(R"({"nothing":1})"), HasSubstr("weight_map"));

  // Without an index, every *.safetensors of the folder is read.
  std::filesystem::remove(idx);
  EXPECT_EQ(WeightSource::open(folder).tensors().size(), 2u);
}

TEST(WeightSource, RawBf16File) {
  TempDir dir("st_raw");
  const std::string p = dir.file("w.bin");
  write_bytes(p, std::vector<uint8_t>(2 * 3 * 2, 7));
  const WeightSource w = WeightSource::open(p, std::vector<uint64_t>{2, 3});
  ASSERT_EQ(w.tensors().size(), 1u);
  EXPECT_EQ(w.tensors()[0].name, kRawTensorName);
  EXPECT_EQ(w.tensors()[0].elements, 6u);
  EXPECT_THAT(
      [&] {
        try {
          WeightSource::open(p, std::vector<uint64_t>{4, 3});
        } catch (const Error& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      AllOf(HasSubstr("w.bin"), HasSubstr("a BF16 tensor of that shape is 24")));
  EXPECT_EQ(parse_raw_shape("4096x14336"), (std::vector<uint64_t>{4096, 14336}));
  EXPECT_EQ(parse_raw_shape("7"), (std::vector<uint64_t>{7}));
  for (const char* bad : {"", "x", "4096x", "0x5", "12a", "-3x2", "99999999999x99999999999"})
    EXPECT_THROW(parse_raw_shape(bad), Error) << bad;
}

}  // namespace
}  // namespace moesim::exec
