#include "crema/blob.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "crema/util/math_functions.hpp"

namespace crema {

template <typename Dtype>
Blob<Dtype>::Blob(const std::vector<int>& shape) {
  Reshape(shape);
}

template <typename Dtype>
Blob<Dtype>::Blob(int num, int channels, int height, int width) {
  Reshape(num, channels, height, width);
}

template <typename Dtype>
void Blob<Dtype>::Reshape(int num, int channels, int height, int width) {
  Reshape(std::vector<int>{num, channels, height, width});
}

template <typename Dtype>
void Blob<Dtype>::Reshape(const std::vector<int>& shape) {
  CREMA_REQUIRE(shape.size() <= static_cast<size_t>(kMaxBlobAxes),
                "a blob has at most " << kMaxBlobAxes << " axes, asked for " << shape.size());
  int64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    CREMA_REQUIRE(shape[i] >= 0, "blob axis " << i << " would have negative size " << shape[i]);
    count *= shape[i];
    CREMA_REQUIRE(count <= INT_MAX,
                  "blob of shape with " << count << "+ elements exceeds the limit of " << INT_MAX);
  }
  if (!shape_data_ || shape_data_->size() < shape.size() * sizeof(int)) {
    shape_data_.reset(new SyncedMemory(shape.size() * sizeof(int)));
  }
  if (!shape.empty()) {
    int* shape_data = static_cast<int*>(shape_data_->mutable_cpu_data());
    for (size_t i = 0; i < shape.size(); ++i) shape_data[i] = shape[i];
  }
  shape_ = shape;
  count_ = static_cast<int>(count);
  // A blob of count 0 (a dimension of 0 in a prototxt) still gets memory, so
  // its data pointers are valid to pass along; only they are never read.
  if (count_ > capacity_ || !data_) {
    capacity_ = count_;
    data_.reset(new SyncedMemory(capacity_ * sizeof(Dtype)));
    diff_.reset(new SyncedMemory(capacity_ * sizeof(Dtype)));
  }
}

namespace {
// A stored shape's 64-bit sizes as a blob's int sizes. A size outside int
// must not wrap (-4294967295 would become 1).
std::vector<int> IntDims(const BlobShape& shape) {
  std::vector<int> dims(shape.dim_size());
  for (int i = 0; i < shape.dim_size(); ++i) {
    CREMA_REQUIRE(shape.dim(i) >= 0 && shape.dim(i) <= INT_MAX,
                  "blob axis " << i << " has size " << shape.dim(i) << "; a size must be in [0, "
                               << INT_MAX << "]");
    dims[i] = static_cast<int>(shape.dim(i));
  }
  return dims;
}
}  // namespace

template <typename Dtype>
void Blob<Dtype>::Reshape(const BlobShape& shape) {
  Reshape(IntDims(shape));
}

std::string ShapeString(const std::vector<int>& shape) {
  std::ostringstream os;
  int64_t count = 1;
  for (int dim : shape) {
    os << dim << " ";
    count *= dim;
  }
  os << "(" << count << ")";
  return os.str();
}

bool SameShapeButLeadingOnes(const std::vector<int>& a, const std::vector<int>& b) {
  const auto first_not_one = [](const std::vector<int>& shape) {
    return std::find_if(shape.begin(), shape.end(), [](int dim) { return dim != 1; });
  };
  return std::equal(first_not_one(a), a.end(), first_not_one(b), b.end());
}

template <typename Dtype>
std::string Blob<Dtype>::shape_string() const {
  return ShapeString(shape_);
}

template <typename Dtype>
int Blob<Dtype>::count(int start_axis, int end_axis) const {
  // Layers pass axes computed from their parameters: a wrong one is the
  // user's, and the layer names itself around this message.
  CREMA_REQUIRE(0 <= start_axis && start_axis <= end_axis && end_axis <= num_axes(),
                "axes [" << start_axis << ", " << end_axis << ") are not within the " << num_axes()
                         << " axes of a blob of shape " << shape_string());
  int count = 1;
  for (int i = start_axis; i < end_axis; ++i) count *= shape_[i];
  return count;
}

template <typename Dtype>
int Blob<Dtype>::CanonicalAxisIndex(int axis_index) const {
  CREMA_REQUIRE(axis_index >= -num_axes() && axis_index < num_axes(),
                "axis " << axis_index << " is out of range for a " << num_axes()
                        << "-D blob of shape " << shape_string());
  return axis_index < 0 ? axis_index + num_axes() : axis_index;
}

template <typename Dtype>
int Blob<Dtype>::LegacyShape(int index) const {
  CREMA_REQUIRE(num_axes() <= 4, "a blob of shape " << shape_string()
                                                    << " has more than 4 axes; expected num x "
                                                       "channels x height x width");
  // Invariant: callers name one of the four legacy axes by a constant.
  CHECK(index >= -4 && index < 4) << "legacy axis " << index;
  if (index >= num_axes() || index < -num_axes()) return 1;
  return shape(index);
}

// Invariant (the CHECKs of both offsets): no layer takes an index from data
// or parameters unchecked; one past the end is allowed, as a bound.
template <typename Dtype>
int Blob<Dtype>::offset(int n, int c, int h, int w) const {
  CHECK_GE(n, 0);
  CHECK_LE(n, num());
  CHECK_GE(c, 0);
  CHECK_LE(c, channels());
  CHECK_GE(h, 0);
  CHECK_LE(h, height());
  CHECK_GE(w, 0);
  CHECK_LE(w, width());
  return ((n * channels() + c) * height() + h) * width() + w;
}

template <typename Dtype>
int Blob<Dtype>::offset(const std::vector<int>& indices) const {
  CHECK_LE(indices.size(), shape_.size());
  int offset = 0;
  for (int i = 0; i < num_axes(); ++i) {
    offset *= shape_[i];
    if (static_cast<int>(indices.size()) > i) {
      CHECK_GE(indices[i], 0);
      CHECK_LT(indices[i], shape_[i]);
      offset += indices[i];
    }
  }
  return offset;
}

// Invariant (the CHECKs on data_ and diff_ below): a blob has memory once it
// is shaped, even with count 0; only a blob never shaped has none.
template <typename Dtype>
const std::shared_ptr<SyncedMemory>& Blob<Dtype>::data() const {
  CHECK(data_);
  return data_;
}

template <typename Dtype>
const std::shared_ptr<SyncedMemory>& Blob<Dtype>::diff() const {
  CHECK(diff_);
  return diff_;
}

template <typename Dtype>
const Dtype* Blob<Dtype>::cpu_data() const {
  CHECK(data_);
  return static_cast<const Dtype*>(data_->cpu_data());
}

template <typename Dtype>
void Blob<Dtype>::set_cpu_data(Dtype* data) {
  CHECK(data);
  // Memory shared with another blob is left to it; this blob gets its own.
  const size_t size = count_ * sizeof(Dtype);
  if (data_->size() != size) {
    data_.reset(new SyncedMemory(size));
    diff_.reset(new SyncedMemory(size));
  }
  data_->set_cpu_data(data);
}

template <typename Dtype>
const int* Blob<Dtype>::gpu_shape() const {
  CHECK(shape_data_);
  return static_cast<const int*>(shape_data_->gpu_data());
}

template <typename Dtype>
const Dtype* Blob<Dtype>::gpu_data() const {
  CHECK(data_);
  return static_cast<const Dtype*>(data_->gpu_data());
}

template <typename Dtype>
void Blob<Dtype>::set_gpu_data(Dtype* data) {
  CHECK(data);
  const size_t size = count_ * sizeof(Dtype);
  if (data_->size() != size) {
    data_.reset(new SyncedMemory(size));
    diff_.reset(new SyncedMemory(size));
  }
  data_->set_gpu_data(data);
}

template <typename Dtype>
const Dtype* Blob<Dtype>::cpu_diff() const {
  CHECK(diff_);
  return static_cast<const Dtype*>(diff_->cpu_data());
}

template <typename Dtype>
const Dtype* Blob<Dtype>::gpu_diff() const {
  CHECK(diff_);
  return static_cast<const Dtype*>(diff_->gpu_data());
}

template <typename Dtype>
Dtype* Blob<Dtype>::mutable_cpu_data() {
  CHECK(data_);
  return static_cast<Dtype*>(data_->mutable_cpu_data());
}

template <typename Dtype>
Dtype* Blob<Dtype>::mutable_gpu_data() {
  CHECK(data_);
  return static_cast<Dtype*>(data_->mutable_gpu_data());
}

template <typename Dtype>
Dtype* Blob<Dtype>::mutable_cpu_diff() {
  CHECK(diff_);
  return static_cast<Dtype*>(diff_->mutable_cpu_data());
}

template <typename Dtype>
Dtype* Blob<Dtype>::mutable_gpu_diff() {
  CHECK(diff_);
  return static_cast<Dtype*>(diff_->mutable_gpu_data());
}

template <typename Dtype>
void Blob<Dtype>::ShareData(const Blob& other) {
  // Invariant (here and in ShareDiff): the net compares shared parameters'
  // shapes first; layers share only between blobs they shaped alike.
  CHECK_EQ(count_, other.count());
  data_ = other.data();
}

template <typename Dtype>
void Blob<Dtype>::ShareDiff(const Blob& other) {
  CHECK_EQ(count_, other.count());
  diff_ = other.diff();
}

// Runs on whichever side holds the newest data, so an update never forces a
// copy between host and device.
template <typename Dtype>
void Blob<Dtype>::Update() {
  switch (data_->head()) {
    case SyncedMemory::HEAD_AT_CPU:
      cpu_axpy<Dtype>(count_, Dtype(-1), cpu_diff(), mutable_cpu_data());
      break;
    case SyncedMemory::HEAD_AT_GPU:
    case SyncedMemory::SYNCED:
#ifdef CREMA_CUDA
      gpu_axpy<Dtype>(count_, Dtype(-1), gpu_diff(), mutable_gpu_data());
#else
      NO_GPU;
#endif
      break;
    case SyncedMemory::UNINITIALIZED:
      break;
  }
}

namespace {
// Reduces a buffer on the side that holds its newest copy.
template <typename Dtype, typename CpuOp, typename GpuOp>
Dtype ReduceWhereFresh(const std::shared_ptr<SyncedMemory>& memory, int count, CpuOp cpu_op,
                       GpuOp gpu_op) {
  if (!memory) return Dtype(0);
  switch (memory->head()) {
    case SyncedMemory::HEAD_AT_CPU:
      return cpu_op(count, static_cast<const Dtype*>(memory->cpu_data()));
    case SyncedMemory::HEAD_AT_GPU:
    case SyncedMemory::SYNCED:
      return gpu_op(count, static_cast<const Dtype*>(memory->gpu_data()));
    case SyncedMemory::UNINITIALIZED:
      return Dtype(0);
  }
  return Dtype(0);
}

template <typename Dtype>
Dtype CpuAsum(int n, const Dtype* x) {
  return cpu_asum<Dtype>(n, x);
}
template <typename Dtype>
Dtype CpuSumsq(int n, const Dtype* x) {
  return cpu_dot<Dtype>(n, x, x);
}
template <typename Dtype>
Dtype GpuAsum(int n, const Dtype* x) {
#ifdef CREMA_CUDA
  Dtype result;
  gpu_asum<Dtype>(n, x, &result);
  return result;
#else
  (void)n;
  (void)x;
  NO_GPU;
  return Dtype(0);
#endif
}
template <typename Dtype>
Dtype GpuSumsq(int n, const Dtype* x) {
#ifdef CREMA_CUDA
  Dtype result;
  gpu_dot<Dtype>(n, x, x, &result);
  return result;
#else
  (void)n;
  (void)x;
  NO_GPU;
  return Dtype(0);
#endif
}

template <typename Dtype>
void ScaleWhereFresh(SyncedMemory* memory, int count, Dtype factor) {
  switch (memory->head()) {
    case SyncedMemory::HEAD_AT_CPU:
      cpu_scal<Dtype>(count, factor, static_cast<Dtype*>(memory->mutable_cpu_data()));
      return;
    case SyncedMemory::HEAD_AT_GPU:
    case SyncedMemory::SYNCED:
#ifdef CREMA_CUDA
      gpu_scal<Dtype>(count, factor, static_cast<Dtype*>(memory->mutable_gpu_data()));
#else
      NO_GPU;
#endif
      return;
    case SyncedMemory::UNINITIALIZED:
      return;
  }
}
}  // namespace

template <typename Dtype>
Dtype Blob<Dtype>::asum_data() const {
  return ReduceWhereFresh<Dtype>(data_, count_, CpuAsum<Dtype>, GpuAsum<Dtype>);
}

template <typename Dtype>
Dtype Blob<Dtype>::asum_diff() const {
  return ReduceWhereFresh<Dtype>(diff_, count_, CpuAsum<Dtype>, GpuAsum<Dtype>);
}

template <typename Dtype>
Dtype Blob<Dtype>::sumsq_data() const {
  return ReduceWhereFresh<Dtype>(data_, count_, CpuSumsq<Dtype>, GpuSumsq<Dtype>);
}

template <typename Dtype>
Dtype Blob<Dtype>::sumsq_diff() const {
  return ReduceWhereFresh<Dtype>(diff_, count_, CpuSumsq<Dtype>, GpuSumsq<Dtype>);
}

template <typename Dtype>
void Blob<Dtype>::scale_data(Dtype scale_factor) {
  if (data_) ScaleWhereFresh(data_.get(), count_, scale_factor);
}

template <typename Dtype>
void Blob<Dtype>::scale_diff(Dtype scale_factor) {
  if (diff_) ScaleWhereFresh(diff_.get(), count_, scale_factor);
}

template <typename Dtype>
bool Blob<Dtype>::ShapeEquals(const BlobProto& other) const {
  if (other.has_num() || other.has_channels() || other.has_height() || other.has_width()) {
    // The legacy 4-D form matches a blob of up to 4 axes padded with 1s.
    return num_axes() <= 4 && LegacyShape(-4) == other.num() &&
           LegacyShape(-3) == other.channels() && LegacyShape(-2) == other.height() &&
           LegacyShape(-1) == other.width();
  }
  // Compared as 64-bit sizes: a stored size beyond int must not wrap into a match.
  const auto& other_dims = other.shape().dim();
  return std::equal(shape_.begin(), shape_.end(), other_dims.begin(), other_dims.end(),
                    [](int mine, int64_t theirs) { return mine == theirs; });
}

template <typename Dtype>
void Blob<Dtype>::CopyFrom(const Blob& source, bool copy_diff, bool reshape) {
  if (source.count() != count_ || source.shape() != shape_) {
    CREMA_REQUIRE(reshape, "cannot copy a blob of shape "
                               << source.shape_string() << " into one of shape " << shape_string());
    ReshapeLike(source);
  }
  const auto& from = copy_diff ? source.diff() : source.data();
  const auto& to = copy_diff ? diff_ : data_;
  if (Context::mode() == Context::GPU) {
#ifdef CREMA_CUDA
    gpu_memcpy(count_ * sizeof(Dtype), from->gpu_data(), to->mutable_gpu_data());
#else
    NO_GPU;
#endif
  } else {
    cpu_copy<Dtype>(count_, static_cast<const Dtype*>(from->cpu_data()),
                    static_cast<Dtype*>(to->mutable_cpu_data()));
  }
}

namespace {
std::string ProtoShapeString(const BlobProto& proto) {
  std::ostringstream os;
  if (proto.has_num() || proto.has_channels() || proto.has_height() || proto.has_width()) {
    os << proto.num() << " " << proto.channels() << " " << proto.height() << " " << proto.width();
  } else {
    for (int i = 0; i < proto.shape().dim_size(); ++i) os << proto.shape().dim(i) << " ";
  }
  return os.str();
}
}  // namespace

namespace {
// IEEE 754 binary16 (NVCaffe's FLOAT16) to float, subnormals, infinities
// and NaN included.
float HalfToFloat(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000) << 16;
  const uint32_t exponent = (half >> 10) & 0x1f;
  const uint32_t mantissa = half & 0x3ff;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  const uint32_t bits = exponent == 0x1f ? sign | 0x7f800000u | (mantissa << 13)
                                         : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// The count values of type Stored in bytes, each through convert.
template <typename Stored, typename Dtype, typename Convert>
void CopyStored(const std::string& bytes, int count, Convert convert, Dtype* out) {
  for (int i = 0; i < count; ++i) {
    Stored value;
    std::memcpy(&value, bytes.data() + static_cast<size_t>(i) * sizeof(Stored), sizeof(Stored));
    out[i] = static_cast<Dtype>(convert(value));
  }
}

// NVCaffe 0.17 writes a blob's values as the bytes of its own type
// (little-endian, as its hosts hold them) in raw_data, typed by
// raw_data_type; FLOAT, FLOAT16 and DOUBLE are the types its nets hold.
template <typename Dtype>
void ReadRawValues(bool typed, Type type, const std::string& bytes, int count, const char* field,
                   Dtype* out) {
  CREMA_REQUIRE(typed,
                "blob has " << field << " but no " << field << "_type saying what its bytes hold");
  const size_t size = type == DOUBLE ? 8 : type == FLOAT ? 4 : type == FLOAT16 ? 2 : 0;
  CREMA_REQUIRE(size > 0, "blob " << field << " holds " << Type_Name(type)
                                  << " values; Crema reads FLOAT, FLOAT16 and DOUBLE");
  CREMA_REQUIRE(bytes.size() == size * static_cast<size_t>(count),
                "blob " << field << " holds " << bytes.size() << " bytes, its shape needs " << count
                        << " " << Type_Name(type) << " values (" << size * count << " bytes)");
  const auto as_is = [](auto value) { return value; };
  if (type == DOUBLE) {
    CopyStored<double>(bytes, count, as_is, out);
  } else if (type == FLOAT) {
    CopyStored<float>(bytes, count, as_is, out);
  } else {
    CopyStored<uint16_t>(bytes, count, HalfToFloat, out);
  }
}
}  // namespace

template <typename Dtype>
void Blob<Dtype>::FromProto(const BlobProto& proto, bool reshape) {
  if (reshape) {
    if (proto.has_num() || proto.has_channels() || proto.has_height() || proto.has_width()) {
      Reshape(proto.num(), proto.channels(), proto.height(), proto.width());
    } else {
      Reshape(proto.shape());
    }
  } else {
    CREMA_REQUIRE(ShapeEquals(proto), "shape mismatch: expected " << shape_string() << ", found "
                                                                  << ProtoShapeString(proto));
  }
  Dtype* data = mutable_cpu_data();
  if (proto.double_data_size() > 0) {
    CREMA_REQUIRE(proto.double_data_size() == count_, "blob holds " << proto.double_data_size()
                                                                    << " values, its shape needs "
                                                                    << count_);
    for (int i = 0; i < count_; ++i) data[i] = static_cast<Dtype>(proto.double_data(i));
  } else if (proto.data_size() == 0 && proto.has_raw_data()) {
    ReadRawValues(proto.has_raw_data_type(), proto.raw_data_type(), proto.raw_data(), count_,
                  "raw_data", data);
  } else {
    CREMA_REQUIRE(proto.data_size() == count_,
                  "blob holds " << proto.data_size() << " values, its shape needs " << count_);
    for (int i = 0; i < count_; ++i) data[i] = static_cast<Dtype>(proto.data(i));
  }
  if (proto.double_diff_size() > 0) {
    CREMA_REQUIRE(proto.double_diff_size() == count_, "blob diff holds "
                                                          << proto.double_diff_size()
                                                          << " values, its shape needs " << count_);
    Dtype* diff = mutable_cpu_diff();
    for (int i = 0; i < count_; ++i) diff[i] = static_cast<Dtype>(proto.double_diff(i));
  } else if (proto.diff_size() > 0) {
    CREMA_REQUIRE(proto.diff_size() == count_,
                  "blob diff holds " << proto.diff_size() << " values, its shape needs " << count_);
    Dtype* diff = mutable_cpu_diff();
    for (int i = 0; i < count_; ++i) diff[i] = static_cast<Dtype>(proto.diff(i));
  } else if (proto.has_raw_diff()) {
    ReadRawValues(proto.has_raw_diff_type(), proto.raw_diff_type(), proto.raw_diff(), count_,
                  "raw_diff", mutable_cpu_diff());
  }
}

namespace {
// Float blobs write the float fields and double blobs the double fields, so
// a value survives a round trip exactly.
void AppendValues(const float* values, int count, google::protobuf::RepeatedField<float>* out,
                  google::protobuf::RepeatedField<double>*) {
  out->Reserve(count);
  for (int i = 0; i < count; ++i) out->AddAlreadyReserved(values[i]);
}
void AppendValues(const double* values, int count, google::protobuf::RepeatedField<float>*,
                  google::protobuf::RepeatedField<double>* out) {
  out->Reserve(count);
  for (int i = 0; i < count; ++i) out->AddAlreadyReserved(values[i]);
}
}  // namespace

template <typename Dtype>
void Blob<Dtype>::ToProto(BlobProto* proto, bool write_diff) const {
  proto->clear_shape();
  for (int dim : shape_) proto->mutable_shape()->add_dim(dim);
  proto->clear_data();
  proto->clear_diff();
  proto->clear_double_data();
  proto->clear_double_diff();
  AppendValues(cpu_data(), count_, proto->mutable_data(), proto->mutable_double_data());
  if (write_diff) {
    AppendValues(cpu_diff(), count_, proto->mutable_diff(), proto->mutable_double_diff());
  }
}

INSTANTIATE_CLASS(Blob);

}  // namespace crema
