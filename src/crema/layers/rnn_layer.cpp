#include "crema/layers/rnn_layer.hpp"

namespace crema {

template <typename Dtype>
void RNNLayer<Dtype>::FillUnrolledNet(NetParameter* net_param) const {
  using Base = RecurrentLayer<Dtype>;
  const int hidden_dim = this->num_output();
  this->AddInputProjections("W_xh_x", "W_xh", "b_h", "W_xh_static", hidden_dim, net_param);
  for (int t = 1; t <= this->num_timesteps(); ++t) {
    Base::AddContinuedState("h", t, net_param);
    this->AddInnerProduct(Base::AtStep("W_hh_h", t - 1), Base::AtStep("h_conted", t - 1),
                          Base::AtStep("W_hh_h", t - 1), hidden_dim, 2, {"W_hh"}, net_param);
    std::vector<std::string> summands{Base::AtStep("W_hh_h", t - 1), Base::AtStep("W_xh_x", t)};
    if (this->static_input()) summands.push_back("W_xh_x_static");
    Base::AddLayer("Eltwise", Base::AtStep("h_input_sum", t), summands,
                   {Base::AtStep("h_neuron_input", t)}, net_param)
        ->mutable_eltwise_param()
        ->set_operation(EltwiseParameter::SUM);
    Base::AddLayer("TanH", Base::AtStep("h_neuron", t), {Base::AtStep("h_neuron_input", t)},
                   {Base::AtStep("h", t)}, net_param);
    this->AddInnerProduct(Base::AtStep("W_ho_h", t), Base::AtStep("h", t),
                          Base::AtStep("W_ho_h", t), hidden_dim, 2, {"W_ho", "b_o"}, net_param);
    Base::AddLayer("TanH", Base::AtStep("o_neuron", t), {Base::AtStep("W_ho_h", t)},
                   {Base::AtStep("o", t)}, net_param);
  }
  this->AddConcatOverTime("o", "o", net_param);
}

INSTANTIATE_CLASS(RNNLayer);
REGISTER_LAYER_CLASS(RNN);

}  // namespace crema
