#include "common/textproto.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace sparseflash {
namespace {

class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty()) {
      first_ = absl::StrFormat("line %d, column %d: %s", line + 1, column + 1, message);
    }
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

}  // namespace

absl::Status ParseTextProto(std::string_view text, std::string_view source_name,
                            google::protobuf::Message* message) {
  google::protobuf::TextFormat::Parser parser;
  ErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), message)) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(source_name), ": not a valid ", message->GetTypeName(), " (",
                     errors.first(), ")"));
  }
  return absl::OkStatus();
}

}  // namespace sparseflash
