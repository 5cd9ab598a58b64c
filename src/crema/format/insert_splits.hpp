// Inserts a Split layer wherever one top blob feeds several bottoms, so each
// consumer gets its own gradient buffer and the split sums them.
#ifndef CREMA_FORMAT_INSERT_SPLITS_HPP_
#define CREMA_FORMAT_INSERT_SPLITS_HPP_

#include <string>

#include "crema/proto/crema.pb.h"

namespace crema {

// A bottom naming no blob produced before it is a user error naming both.
void InsertSplits(const NetParameter& param, NetParameter* param_split);

std::string SplitLayerName(const std::string& layer_name, const std::string& blob_name,
                           int blob_idx);
std::string SplitBlobName(const std::string& layer_name, const std::string& blob_name,
                          int blob_idx, int split_idx);

}  // namespace crema

#endif  // CREMA_FORMAT_INSERT_SPLITS_HPP_
