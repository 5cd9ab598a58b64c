// Compares the weights of two .caffemodel files layer by layer and prints the
// largest difference relative to each blob's largest magnitude; exits 1 when
// it exceeds the tolerance (or the files hold different layers or shapes).
//   compare_caffemodels A.caffemodel B.caffemodel [TOLERANCE=1e-5]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "crema/common.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/util/io.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s A.caffemodel B.caffemodel [TOLERANCE=1e-5]\n", argv[0]);
    return 2;
  }
  const double tolerance = argc > 3 ? std::atof(argv[3]) : 1e-5;
  try {
    crema::NetParameter a, b;
    crema::ReadProtoFromBinaryFile(argv[1], &a);
    crema::ReadProtoFromBinaryFile(argv[2], &b);
    CREMA_REQUIRE(a.layer_size() == b.layer_size(), "the files hold different layer counts");
    double worst = 0;
    int blobs = 0;
    for (int l = 0; l < a.layer_size(); ++l) {
      CREMA_REQUIRE(a.layer(l).blobs_size() == b.layer(l).blobs_size(),
                    "layer " << a.layer(l).name() << ": different blob counts");
      for (int k = 0; k < a.layer(l).blobs_size(); ++k, ++blobs) {
        const crema::BlobProto& x = a.layer(l).blobs(k);
        const crema::BlobProto& y = b.layer(l).blobs(k);
        CREMA_REQUIRE(x.data_size() == y.data_size(),
                      "layer " << a.layer(l).name() << " blob " << k << ": different sizes");
        double scale = 1e-20, diff = 0;
        for (int i = 0; i < x.data_size(); ++i) {
          scale = std::max(scale, std::fabs(static_cast<double>(y.data(i))));
          diff = std::max(diff, std::fabs(static_cast<double>(x.data(i)) - y.data(i)));
        }
        worst = std::max(worst, diff / scale);
      }
    }
    std::printf("%d blobs, largest relative difference %.3g (tolerance %.3g)\n", blobs, worst,
                tolerance);
    return worst <= tolerance ? 0 : 1;
  } catch (const crema::Error& e) {
    std::fprintf(stderr, "compare_caffemodels: %s\n", e.what());
    return 1;
  }
}
