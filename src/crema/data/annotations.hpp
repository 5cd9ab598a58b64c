// Box annotations as SSD's fork stores them: a label map (LabelMap
// prototxt: names, labels, display names), Pascal VOC XML files (an image's
// size and its objects: class name, difficult flag, bndbox in pixels), and
// AnnotatedDatum records (boxes normalised by the image size, grouped by
// label). Every defect is a user error naming the file and, where there is
// one, the object.
#ifndef CREMA_DATA_ANNOTATIONS_HPP_
#define CREMA_DATA_ANNOTATIONS_HPP_

#include <map>
#include <string>
#include <vector>

#include "crema/proto/crema.pb.h"

namespace crema {
namespace ssd {

// Reads a label map; two items with one name or one label, a negative
// label, or an item without a name are errors naming the file.
LabelMap ReadLabelMap(const std::string& filename);
// Name to label.
std::map<std::string, int> LabelsByName(const LabelMap& map);

struct VocObject {
  int label = 0;
  bool difficult = false;
  float xmin = 0, ymin = 0, xmax = 0, ymax = 0;  // pixels, as the file gives them
};

struct VocAnnotation {
  int width = 0, height = 0;  // <size>; 0 where the file has none
  std::vector<VocObject> objects;
};

// Reads a VOC XML file: each <object>'s <name> must be in `labels`, its
// <bndbox> must have xmin <= xmax and ymin <= ymax, and lie within the
// <size> when the file gives one. No objects is no error: the image is all
// background.
VocAnnotation ReadVocAnnotation(const std::string& filename,
                                const std::map<std::string, int>& labels);

// Reads the fork's text form: one object per line, "name xmin ymin xmax
// ymax" in pixels (blank lines skipped); the name must be in `labels`, the
// minimum at most the maximum. The text gives no image size (width and
// height are 0), and no object is difficult.
VocAnnotation ReadTextAnnotation(const std::string& filename,
                                 const std::map<std::string, int>& labels);

// Refuses, naming `filename` and the object, a box that leaves the
// annotation's width x height image.
void RequireBoxesInside(const VocAnnotation& annotation, const std::string& filename);

// The objects as the fork's records hold them: coordinates divided by the
// image's width and height, one AnnotationGroup per label in increasing
// label order, instance ids counting from 0 within a group; type BBOX.
void SetAnnotations(const VocAnnotation& annotation, int width, int height, AnnotatedDatum* datum);

}  // namespace ssd
}  // namespace crema

#endif  // CREMA_DATA_ANNOTATIONS_HPP_
