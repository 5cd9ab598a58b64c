// Blob: an N-dimensional array of values (data) and their gradients (diff),
// each held in a SyncedMemory so it moves between host and device on demand.
#ifndef CREMA_BLOB_HPP_
#define CREMA_BLOB_HPP_

#include <memory>
#include <string>
#include <vector>

#include "crema/common.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/syncedmem.hpp"

namespace crema {

constexpr int kMaxBlobAxes = 32;

// A shape as messages print it: "2 3 4 (24)", the sizes then the count.
std::string ShapeString(const std::vector<int>& shape);
// Whether two shapes are the same once leading axes of size 1 are dropped:
// legacy (V1) files pad trained blobs to 4-D with them, and the values and
// their order are the same.
bool SameShapeButLeadingOnes(const std::vector<int>& a, const std::vector<int>& b);

template <typename Dtype>
class Blob {
 public:
  Blob() = default;
  explicit Blob(const std::vector<int>& shape);
  // The legacy 4-D form: number, channels, height, width.
  Blob(int num, int channels, int height, int width);

  // Changes the shape; memory is reallocated only when the blob grows past
  // what it already holds, so reshaping to a smaller size never allocates.
  void Reshape(const std::vector<int>& shape);
  void Reshape(const BlobShape& shape);
  void Reshape(int num, int channels, int height, int width);
  void ReshapeLike(const Blob& other) { Reshape(other.shape()); }

  std::string shape_string() const;
  const std::vector<int>& shape() const { return shape_; }
  // Size of one axis; negative indices count from the end.
  int shape(int index) const { return shape_[CanonicalAxisIndex(index)]; }
  int num_axes() const { return static_cast<int>(shape_.size()); }
  int count() const { return count_; }
  // Product of the sizes of axes [start_axis, end_axis).
  int count(int start_axis, int end_axis) const;
  int count(int start_axis) const { return count(start_axis, num_axes()); }
  // Maps an axis index in [-num_axes, num_axes) to [0, num_axes).
  int CanonicalAxisIndex(int axis_index) const;

  // The legacy 4-D accessors (axes beyond the blob's count as size 1).
  int num() const { return LegacyShape(0); }
  int channels() const { return LegacyShape(1); }
  int height() const { return LegacyShape(2); }
  int width() const { return LegacyShape(3); }
  int LegacyShape(int index) const;

  // Flat index of an element.
  int offset(int n, int c = 0, int h = 0, int w = 0) const;
  int offset(const std::vector<int>& indices) const;

  // Copies data (or diff) from source; with reshape, takes its shape first,
  // otherwise the shapes must already agree.
  void CopyFrom(const Blob& source, bool copy_diff = false, bool reshape = false);

  Dtype data_at(int n, int c, int h, int w) const { return cpu_data()[offset(n, c, h, w)]; }
  Dtype diff_at(int n, int c, int h, int w) const { return cpu_diff()[offset(n, c, h, w)]; }
  Dtype data_at(const std::vector<int>& index) const { return cpu_data()[offset(index)]; }
  Dtype diff_at(const std::vector<int>& index) const { return cpu_diff()[offset(index)]; }

  const std::shared_ptr<SyncedMemory>& data() const;
  const std::shared_ptr<SyncedMemory>& diff() const;

  const Dtype* cpu_data() const;
  void set_cpu_data(Dtype* data);
  const int* gpu_shape() const;
  const Dtype* gpu_data() const;
  void set_gpu_data(Dtype* data);
  const Dtype* cpu_diff() const;
  const Dtype* gpu_diff() const;
  Dtype* mutable_cpu_data();
  Dtype* mutable_gpu_data();
  Dtype* mutable_cpu_diff();
  Dtype* mutable_gpu_diff();

  // data -= diff: the plain gradient step.
  void Update();

  // Reads a BlobProto (float or double values, N-D or legacy 4-D shape). With
  // reshape false the shapes must match; a mismatch is a user error (Error).
  void FromProto(const BlobProto& proto, bool reshape = true);
  void ToProto(BlobProto* proto, bool write_diff = false) const;

  Dtype asum_data() const;
  Dtype asum_diff() const;
  Dtype sumsq_data() const;
  Dtype sumsq_diff() const;
  void scale_data(Dtype scale_factor);
  void scale_diff(Dtype scale_factor);

  // Makes this blob use other's data (or diff) memory; the counts must agree.
  void ShareData(const Blob& other);
  void ShareDiff(const Blob& other);

  bool ShapeEquals(const BlobProto& other) const;

 private:
  std::shared_ptr<SyncedMemory> data_;
  std::shared_ptr<SyncedMemory> diff_;
  std::shared_ptr<SyncedMemory> shape_data_;
  std::vector<int> shape_;
  int count_ = 0;
  int capacity_ = 0;

  DISABLE_COPY_AND_ASSIGN(Blob);
};

}  // namespace crema

#endif  // CREMA_BLOB_HPP_
