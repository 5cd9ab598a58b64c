// The oneDNN softmax against the reference one along the channel axis and a
// later one, in place too; and a numerical gradient check.
#include <gtest/gtest.h>

#include <vector>

#include "crema/dnnl/dnnl_softmax_layer.hpp"
#include "crema/layers/softmax_layer.hpp"
#include "dnnl/dnnl_reference_check.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

TEST(DnnlSoftmaxLayerTest, ChannelsMatchReference) {
  ExpectDnnlMatchesReference<SoftmaxLayer, DnnlSoftmaxLayer>(
      {"name: 'prob' type: 'Softmax'", {{2, 5, 3, 4}}});
}

TEST(DnnlSoftmaxLayerTest, LaterAxisInPlaceMatchesReference) {
  DnnlCheck check{"name: 'prob' type: 'Softmax' softmax_param { axis: 2 }", {{2, 3, 6, 2}}};
  check.in_place = true;
  ExpectDnnlMatchesReference<SoftmaxLayer, DnnlSoftmaxLayer>(check);
}

TEST(DnnlSoftmaxLayerTest, NumericalGradient) {
  LayerParameter param;
  ReadProtoFromString("name: 'prob' type: 'Softmax'", "layer", &param);
  Blob<float> bottom(std::vector<int>{2, 4, 2, 3}), top;
  GaussianFill(&bottom, 1.0f);
  std::vector<Blob<float>*> bottom_vec{&bottom}, top_vec{&top};
  DnnlSoftmaxLayer<float> layer(WithEngine(param, Engine::kDnnl));
  GradientChecker<float> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
  EXPECT_TRUE(layer.uses_dnnl());
}

}  // namespace
}  // namespace crema
