#include "crema/layers/crop_layer.hpp"

namespace crema {

namespace {

// The crop's index map, by value into the kernels (a few hundred bytes).
struct CropMap {
  int num_axes;
  int top_shape[kMaxBlobAxes];
  int bottom_strides[kMaxBlobAxes];
  int offsets[kMaxBlobAxes];
};

__device__ int64_t BottomIndexOf(int64_t top_index, const CropMap& map) {
  int64_t bottom_index = 0;
  for (int axis = map.num_axes - 1; axis >= 0; --axis) {
    const int64_t coordinate = top_index % map.top_shape[axis];
    top_index /= map.top_shape[axis];
    bottom_index += (coordinate + map.offsets[axis]) * map.bottom_strides[axis];
  }
  return bottom_index;
}

template <typename Dtype>
__global__ void CropForward(const int64_t n, const Dtype* bottom_data, const CropMap map,
                            Dtype* top_data) {
  CUDA_KERNEL_LOOP(index, n) { top_data[index] = bottom_data[BottomIndexOf(index, map)]; }
}

// Each top element has its own place in bottom[0]: no two threads collide.
template <typename Dtype>
__global__ void CropBackward(const int64_t n, const Dtype* top_diff, const CropMap map,
                             Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) { bottom_diff[BottomIndexOf(index, map)] = top_diff[index]; }
}

CropMap MakeCropMap(const std::vector<int>& top_shape, const std::vector<int>& bottom_strides,
                    const std::vector<int>& offsets) {
  CropMap map{};
  map.num_axes = static_cast<int>(top_shape.size());
  for (int axis = 0; axis < map.num_axes; ++axis) {
    map.top_shape[axis] = top_shape[axis];
    map.bottom_strides[axis] = bottom_strides[axis];
    map.offsets[axis] = offsets[axis];
  }
  return map;
}

}  // namespace

template <typename Dtype>
void CropLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const int64_t count = top[0]->count();
  if (count == 0) return;
  CropForward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), MakeCropMap(top_shape_, bottom_strides_, offsets_),
      top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void CropLayer<Dtype>::Backward_gpu(const std::vector<Blob<Dtype>*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  gpu_set(bottom[0]->count(), Dtype(0), bottom_diff);
  const int64_t count = top[0]->count();
  if (count == 0) return;
  CropBackward<Dtype><<<CREMA_GET_BLOCKS(count), CREMA_CUDA_NUM_THREADS>>>(
      count, top[0]->gpu_diff(), MakeCropMap(top_shape_, bottom_strides_, offsets_), bottom_diff);
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(CropLayer);

}  // namespace crema
