#include "crema/layers/lstm_layer.hpp"

namespace crema {

template <typename Dtype>
void LSTMLayer<Dtype>::FillUnrolledNet(NetParameter* net_param) const {
  using Base = RecurrentLayer<Dtype>;
  const int gate_dim = 4 * this->num_output();
  this->AddInputProjections("W_xc_x", "W_xc", "b_c", "W_xc_static", gate_dim, net_param);
  for (int t = 1; t <= this->num_timesteps(); ++t) {
    Base::AddContinuedState("h", t, net_param);
    this->AddInnerProduct(Base::AtStep("W_hc_h", t - 1), Base::AtStep("h_conted", t - 1),
                          Base::AtStep("W_hc_h", t - 1), gate_dim, 2, {"W_hc"}, net_param);
    std::vector<std::string> summands{Base::AtStep("W_hc_h", t - 1), Base::AtStep("W_xc_x", t)};
    if (this->static_input()) summands.push_back("W_xc_x_static");
    Base::AddLayer("Eltwise", Base::AtStep("gate_input", t), summands,
                   {Base::AtStep("gate_input", t)}, net_param)
        ->mutable_eltwise_param()
        ->set_operation(EltwiseParameter::SUM);
    // The unit resets c itself where cont_t is 0.
    Base::AddLayer(
        "LSTMUnit", Base::AtStep("unit", t),
        {Base::AtStep("c", t - 1), Base::AtStep("gate_input", t), Base::AtStep("cont", t)},
        {Base::AtStep("c", t), Base::AtStep("h", t)}, net_param);
  }
  this->AddConcatOverTime("h", "h", net_param);
}

INSTANTIATE_CLASS(LSTMLayer);
REGISTER_LAYER_CLASS(LSTM);

}  // namespace crema
