#include "engine/tiny/tiny_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "common/files.h"

namespace sparseflash {
namespace {

constexpr uint32_t kMagic = 0x616b3432;

constexpr float kKvScale = 8.0f / 127.0f;
constexpr float kGateThreshold = 0.25f;

class Reader {
 public:
  Reader(const std::string& data, std::string path) : data_(data), path_(std::move(path)) {}
  template <typename T>
  absl::Status Read(std::vector<T>* out, size_t count, const std::string& what) {
    const size_t bytes = count * sizeof(T);
    if (pos_ + bytes > data_.size()) {
      return absl::DataLossError(absl::StrCat(path_, ": file ends inside ", what, " (needs ",
                                              pos_ + bytes, " bytes, has ", data_.size(), ")"));
    }
    out->resize(count);
    std::memcpy(out->data(), data_.data() + pos_, bytes);
    if constexpr (std::is_floating_point_v<T>) {
      // A NaN or infinite scale or norm weight poisons every activation after it.
      for (size_t i = 0; i < count; ++i) {
        if (!std::isfinite((*out)[i])) {
          return absl::InvalidArgumentError(absl::StrCat(path_, ": ", what, " value ", i,
                                                         " (at byte ", pos_ + i * sizeof(T),
                                                         ") is ", (*out)[i], ", not finite"));
        }
      }
    }
    pos_ += bytes;
    return absl::OkStatus();
  }
  absl::Status Tensor(QTensor* t, int rows, int cols, int group, const std::string& what) {
    t->rows = rows;
    t->cols = cols;
    if (absl::Status s = Read(&t->q, size_t(rows) * cols, what); !s.ok()) return s;
    return Read(&t->s, size_t(rows) * cols / group, what + " scales");
  }
  size_t pos() const { return pos_; }
  void Skip(size_t n) { pos_ += n; }

 private:
  const std::string& data_;
  std::string path_;
  size_t pos_ = 0;
};

// Round half away from zero. Finite weights can still overflow an activation
// to infinity and then NaN; a NaN quantizes to 0 rather than to an undefined cast.
int8_t QuantizeOne(float v, float scale) {
  const float r = std::round(v / scale);
  if (std::isnan(r)) return 0;
  return static_cast<int8_t>(std::clamp(r, -128.0f, 127.0f));
}

void RmsNorm(const std::vector<float>& x, const float* w, bool shift, std::vector<float>* out) {
  float ss = 0;
  for (float v : x) ss += v * v;
  ss /= static_cast<float>(x.size());
  ss += 1e-5f;
  ss = 1.0f / std::sqrt(ss);
  out->resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    float v = w[i] * (ss * x[i]);
    (*out)[i] = shift ? std::max(0.0f, v - 1.0f) : v;
  }
}

// out[r] = sum over groups of (int32 dot) * weight scale * activation scale.
void MatVec(const QTensor& w, const QVector& x, int group, std::vector<float>* out) {
  out->assign(w.rows, 0.0f);
  const int groups = w.cols / group;
  for (int r = 0; r < w.rows; ++r) {
    const int8_t* row = w.q.data() + size_t(r) * w.cols;
    float acc = 0;
    for (int g = 0; g < groups; ++g) {
      int32_t isum = 0;
      for (int k = 0; k < group; ++k) isum += int32_t{row[g * group + k]} * x.q[g * group + k];
      acc += static_cast<float>(isum) * w.s[(size_t(r) * w.cols + g * group) / group] * x.s[g];
    }
    (*out)[r] = acc;
  }
}

}  // namespace

QVector Quantize(const std::vector<float>& v, int group) {
  QVector out;
  out.q.resize(v.size());
  out.s.resize(v.size() / group);
  for (size_t g = 0; g < out.s.size(); ++g) {
    float wmax = 0;
    for (int k = 0; k < group; ++k) {
      float a = std::fabs(v[g * group + k]);
      if (a < 100.0f) wmax = std::max(wmax, a);
    }
    const float scale = wmax / 127.0f;
    out.s[g] = scale;
    for (int k = 0; k < group; ++k) {
      out.q[g * group + k] = scale == 0 ? 0 : QuantizeOne(v[g * group + k], scale);
    }
  }
  return out;
}

absl::StatusOr<TinyModel> TinyModel::Load(const std::string& path) {
  absl::StatusOr<std::string> file = ReadWholeFile(path, "TinyStories model", int64_t{1} << 30);
  if (!file.ok()) return file.status();
  return Parse(*file, path);
}

absl::StatusOr<TinyModel> TinyModel::Parse(const std::string& data, const std::string& path) {
  if (data.size() < kHeaderBytes) {
    return absl::DataLossError(absl::StrCat(path, ": ", data.size(), " bytes, shorter than the ",
                                            kHeaderBytes, "-byte header"));
  }
  uint32_t magic;
  int32_t version, shape[7], group;
  std::memcpy(&magic, data.data(), 4);
  std::memcpy(&version, data.data() + 4, 4);
  std::memcpy(shape, data.data() + 8, 28);
  const uint8_t shared = static_cast<uint8_t>(data[36]);
  std::memcpy(&group, data.data() + 37, 4);
  if (magic != kMagic) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": header.magic is 0x", absl::Hex(magic),
                                                   ", not 0x616b3432 (llama2.c int8 export)"));
  }
  if (version != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": header.version is ", version, ", only version 2 is supported"));
  }
  TinyModel m;
  m.file_bytes_ = static_cast<int64_t>(data.size());
  TinyConfig& c = m.c_;
  c = {shape[0], shape[1], shape[2], shape[3], shape[4], shape[5], shape[6], shared == 1, group};
  const char* names[] = {"dim",        "hidden_dim", "n_layers", "n_heads",
                         "n_kv_heads", "vocab_size", "seq_len"};
  for (int i = 0; i < 7; ++i) {
    if (shape[i] <= 0 || shape[i] > (1 << 20)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": header.", names[i], " = ", shape[i], " is out of range"));
    }
  }
  if (group <= 0 || c.dim % group != 0 || c.hidden % group != 0 || !c.shared_classifier ||
      c.dim % c.heads != 0 || c.heads != c.kv_heads) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": header describes an unsupported shape (group_size ", group, ", dim ",
                     c.dim, ", hidden ", c.hidden, ", heads ", c.heads, "/", c.kv_heads,
                     ", shared classifier ", int{shared}, ")"));
  }
  if (const int64_t expected = ExpectedFileBytes(c);
      expected != static_cast<int64_t>(data.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the file does not match its header: it has ", data.size(),
                     " bytes, and the header (dim ", c.dim, ", hidden_dim ", c.hidden,
                     ", n_layers ", c.layers, ", vocab_size ", c.vocab, ", group_size ", group,
                     ") describes ", expected));
  }
  Reader r(data, path);
  r.Skip(kHeaderBytes);
  // Sizes in 64 bits: each shape value may be up to 2^20.
  const size_t norms = size_t(c.layers) * size_t(c.dim);
  for (auto [vec, n, what] : {std::tuple{&m.att_norm, norms, "attention norms"},
                              std::tuple{&m.ffn_norm, norms, "FFN norms"},
                              std::tuple{&m.final_norm, size_t(c.dim), "final norm"}}) {
    if (absl::Status s = r.Read(vec, n, what); !s.ok()) return s;
  }
  if (absl::Status s = r.Tensor(&m.embedding, c.vocab, c.dim, group, "token embedding"); !s.ok()) {
    return s;
  }
  struct Spec {
    std::vector<QTensor>* t;
    int rows, cols;
    const char* name;
  };
  for (const Spec& spec : {Spec{&m.wq, c.dim, c.dim, "wq"}, Spec{&m.wk, c.dim, c.dim, "wk"},
                           Spec{&m.wv, c.dim, c.dim, "wv"}, Spec{&m.wo, c.dim, c.dim, "wo"},
                           Spec{&m.w1, c.hidden, c.dim, "w1"}, Spec{&m.w2, c.dim, c.hidden, "w2"},
                           Spec{&m.w3, c.hidden, c.dim, "w3"}}) {
    spec.t->resize(c.layers);
    for (int l = 0; l < c.layers; ++l) {
      absl::Status s = r.Tensor(&(*spec.t)[l], spec.rows, spec.cols, group,
                                absl::StrCat(spec.name, " of layer ", l));
      if (!s.ok()) return s;
    }
  }
  if (r.pos() != data.size()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", data.size() - r.pos(),
                                                   " bytes left after the last tensor; the "
                                                   "file does not match its header"));
  }
  return m;
}

int64_t TinyModel::ExpectedFileBytes(const TinyConfig& c) {
  // Each tensor: int8 values and a float scale per group. In doubles (exact
  // below 2^53), so a header of huge values cannot overflow the sum.
  auto tensor = [&c](double rows, int cols) { return rows * (cols + 4.0 * (cols / c.group)); };
  const double norms = (2.0 * c.layers * c.dim + c.dim) * 4;
  const double per_layer = 4 * tensor(c.dim, c.dim) + 3 * tensor(c.hidden, c.dim);
  const double bytes = kHeaderBytes + norms + tensor(c.vocab, c.dim) + c.layers * per_layer;
  return bytes < 0x1p62 ? static_cast<int64_t>(bytes) : INT64_MAX;
}

int64_t TinyModel::up_bytes() const { return c_.dim + int64_t{4} * (c_.dim / c_.group); }

int64_t TinyModel::bundle_bytes() const { return up_bytes() + c_.dim + int64_t{4} * c_.dim; }

int64_t TinyModel::bundle_stride() const {
  return (bundle_bytes() + kTinyFlashAlignment - 1) / kTinyFlashAlignment * kTinyFlashAlignment;
}

void TinyModel::WriteBundle(int layer, int neuron, uint8_t* out) const {
  const int dim = c_.dim, hidden = c_.hidden, group = c_.group;
  const QTensor& up = w3[layer];
  const QTensor& down = w2[layer];
  std::memcpy(out, up.q.data() + size_t(neuron) * dim, dim);
  std::memcpy(out + dim, up.s.data() + size_t(neuron) * dim / group, 4 * size_t(dim / group));
  int8_t* down_q = reinterpret_cast<int8_t*>(out + up_bytes());
  float* down_s = reinterpret_cast<float*>(out + up_bytes() + dim);
  for (int j = 0; j < dim; ++j) {
    down_q[j] = down.q[size_t(j) * hidden + neuron];
    const float s = down.s[(size_t(j) * hidden + neuron) / group];
    std::memcpy(down_s + j, &s, 4);
  }
}

TinyForward::TinyForward(const TinyModel& model)
    : m_(model),
      key_cache_(size_t(model.config().layers) * model.config().seq_len * model.config().dim),
      value_cache_(key_cache_.size()) {}

void TinyForward::Begin(int token, int pos) {
  const TinyConfig& c = m_.config();
  pos_ = pos;
  x_.resize(c.dim);
  for (int i = 0; i < c.dim; ++i) {
    x_[i] = m_.embedding.q[size_t(token) * c.dim + i] *
            m_.embedding.s[(size_t(token) * c.dim + i) / c.group];
  }
}

std::vector<uint32_t> TinyForward::AttentionAndGate(int l) {
  const TinyConfig& c = m_.config();
  const int head_size = c.dim / c.heads;
  std::vector<float> a, q, k, v, att_out(c.dim, 0.0f), tmp;
  RmsNorm(x_, m_.att_norm.data() + size_t(l) * c.dim, /*shift=*/true, &a);
  QVector aq = Quantize(a, c.group);
  MatVec(m_.wq[l], aq, c.group, &q);
  MatVec(m_.wk[l], aq, c.group, &k);
  MatVec(m_.wv[l], aq, c.group, &v);
  for (int i = 0; i < c.dim; i += 2) {
    const int head_dim = i % head_size;
    const float freq = 1.0f / std::pow(10000.0f, head_dim / static_cast<float>(head_size));
    const float val = pos_ * freq, fcr = std::cos(val), fci = std::sin(val);
    for (std::vector<float>* vec : {&q, &k}) {
      const float v0 = (*vec)[i], v1 = (*vec)[i + 1];
      (*vec)[i] = v0 * fcr - v1 * fci;
      (*vec)[i + 1] = v0 * fci + v1 * fcr;
    }
  }
  const size_t layer_base = size_t(l) * c.seq_len * c.dim;
  for (int i = 0; i < c.dim; ++i) {
    key_cache_[layer_base + size_t(pos_) * c.dim + i] = QuantizeOne(k[i], kKvScale);
    value_cache_[layer_base + size_t(pos_) * c.dim + i] = QuantizeOne(v[i], kKvScale);
  }
  std::vector<float> scores(pos_ + 1);
  for (int h = 0; h < c.heads; ++h) {
    const float* qh = q.data() + h * head_size;
    for (int t = 0; t <= pos_; ++t) {
      const int8_t* kt = key_cache_.data() + layer_base + size_t(t) * c.dim + h * head_size;
      float score = 0;
      for (int i = 0; i < head_size; ++i) score += qh[i] * (kt[i] * kKvScale);
      scores[t] = score / std::sqrt(static_cast<float>(head_size));
    }
    const float max = *std::max_element(scores.begin(), scores.end());
    float sum = 0;
    for (float& s : scores) {
      s = std::exp(s - max);
      sum += s;
    }
    for (float& s : scores) s /= sum;
    float* out = att_out.data() + h * head_size;
    for (int t = 0; t <= pos_; ++t) {
      const int8_t* vt = value_cache_.data() + layer_base + size_t(t) * c.dim + h * head_size;
      for (int i = 0; i < head_size; ++i) out[i] += scores[t] * (vt[i] * kKvScale);
    }
  }
  MatVec(m_.wo[l], Quantize(att_out, c.group), c.group, &tmp);
  for (int i = 0; i < c.dim; ++i) x_[i] += tmp[i];

  std::vector<float> f;
  RmsNorm(x_, m_.ffn_norm.data() + size_t(l) * c.dim, /*shift=*/true, &f);
  f_ = Quantize(f, c.group);
  MatVec(m_.w1[l], f_, c.group, &g_);
  std::vector<uint32_t> gate;
  for (int i = 0; i < c.hidden; ++i) {
    if (std::max(0.0f, g_[i] - kGateThreshold) != 0.0f) gate.push_back(i);
  }
  return gate;
}

std::vector<uint32_t> TinyForward::FinishFfn(int l, const std::vector<uint32_t>& neurons,
                                             const std::vector<const uint8_t*>& bundles) {
  const TinyConfig& c = m_.config();
  const int dim = c.dim, group = c.group;
  std::vector<float> h(c.hidden, 0.0f);
  std::vector<uint32_t> active;
  for (size_t k = 0; k < neurons.size(); ++k) {
    const uint8_t* b = bundles[k];
    const int8_t* up = reinterpret_cast<const int8_t*>(b);
    float u = 0;
    for (int g = 0; g < dim / group; ++g) {
      float up_scale;
      std::memcpy(&up_scale, b + dim + 4 * g, 4);
      int32_t isum = 0;
      for (int i = g * group; i < (g + 1) * group; ++i) isum += int32_t{up[i]} * f_.q[i];
      u += static_cast<float>(isum) * up_scale * f_.s[g];
    }
    const uint32_t n = neurons[k];
    h[n] = std::max(0.0f, g_[n] - kGateThreshold) * u;
    if (h[n] != 0.0f) active.push_back(n);
  }
  // x += W2 (quantized h), from the down columns of the active neurons only:
  // inactive neurons quantize to 0 and add nothing to the integer sums.
  QVector hq = Quantize(h, group);
  const int groups = c.hidden / group;
  std::vector<int32_t> isum(size_t(dim) * groups, 0);
  std::vector<const uint8_t*> by_neuron(c.hidden, nullptr);
  for (size_t k = 0; k < neurons.size(); ++k) by_neuron[neurons[k]] = bundles[k];
  for (uint32_t n : active) {
    const int8_t* down = reinterpret_cast<const int8_t*>(by_neuron[n] + m_.up_bytes());
    for (int j = 0; j < dim; ++j)
      isum[size_t(j) * groups + n / group] += int32_t{down[j]} * hq.q[n];
  }
  for (int j = 0; j < dim; ++j) {
    float acc = 0;
    for (int g = 0; g < groups; ++g) {
      // The down scale of row j, group g: from any neuron of that group (all share it).
      acc += static_cast<float>(isum[size_t(j) * groups + g]) *
             m_.w2[l].s[(size_t(j) * c.hidden + g * group) / group] * hq.s[g];
    }
    x_[j] += acc;
  }
  return active;
}

std::vector<float> TinyForward::Logits() {
  const TinyConfig& c = m_.config();
  std::vector<float> xn, logits;
  RmsNorm(x_, m_.final_norm.data(), /*shift=*/false, &xn);
  MatVec(m_.embedding, Quantize(xn, c.group), c.group, &logits);
  return logits;
}

std::vector<float> TinyForward::DenseStep(int token, int pos,
                                          std::vector<std::vector<uint32_t>>* active) {
  const TinyConfig& c = m_.config();
  Begin(token, pos);
  std::vector<uint8_t> storage(size_t(c.hidden) * m_.bundle_bytes());
  for (int l = 0; l < c.layers; ++l) {
    AttentionAndGate(l);
    std::vector<uint32_t> all(c.hidden);
    std::vector<const uint8_t*> bundles(c.hidden);
    for (int n = 0; n < c.hidden; ++n) {
      all[n] = n;
      bundles[n] = storage.data() + size_t(n) * m_.bundle_bytes();
      m_.WriteBundle(l, n, storage.data() + size_t(n) * m_.bundle_bytes());
    }
    std::vector<uint32_t> on = FinishFfn(l, all, bundles);
    if (active) active->push_back(std::move(on));
  }
  return Logits();
}

int ArgMax(const std::vector<float>& v) {
  return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace sparseflash
