#include "crema/data/annotations.hpp"

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <set>
#include <sstream>

#include "crema/common.hpp"
#include "crema/util/io.hpp"

namespace crema {
namespace ssd {

LabelMap ReadLabelMap(const std::string& filename) {
  LabelMap map;
  ReadProtoFromTextFile(filename, &map);
  std::set<std::string> names;
  std::set<int> labels;
  for (int i = 0; i < map.item_size(); ++i) {
    const LabelMapItem& item = map.item(i);
    CREMA_REQUIRE(!item.name().empty(), filename << ": item " << i + 1 << " has no name");
    CREMA_REQUIRE(item.label() >= 0, filename << ": item '" << item.name() << "' has label "
                                              << item.label()
                                              << "; labels are 0 (background) and up");
    CREMA_REQUIRE(names.insert(item.name()).second,
                  filename << ": two items are named '" << item.name() << "'");
    CREMA_REQUIRE(labels.insert(item.label()).second,
                  filename << ": two items have label " << item.label() << " (the second is '"
                           << item.name() << "')");
  }
  CREMA_REQUIRE(map.item_size() > 0, filename << ": the label map has no items");
  return map;
}

std::map<std::string, int> LabelsByName(const LabelMap& map) {
  std::map<std::string, int> labels;
  for (const LabelMapItem& item : map.item()) labels[item.name()] = item.label();
  return labels;
}

namespace {

using boost::property_tree::ptree;

float Coordinate(const ptree& box, const char* name, const std::string& where) {
  const boost::optional<float> value = box.get_optional<float>(name);
  CREMA_REQUIRE(value.has_value(), where << ": <bndbox> has no <" << name << "> number");
  return *value;
}

VocObject ReadObject(const ptree& object, const std::map<std::string, int>& labels,
                     const VocAnnotation& annotation, const std::string& where) {
  VocObject result;
  const std::string name = object.get<std::string>("name", "");
  const auto label = labels.find(name);
  CREMA_REQUIRE(label != labels.end(),
                where << ": the class '" << name << "' is not in the label map");
  result.label = label->second;
  result.difficult = object.get<int>("difficult", 0) != 0;
  const boost::optional<const ptree&> box = object.get_child_optional("bndbox");
  CREMA_REQUIRE(box.has_value(), where << " ('" << name << "'): no <bndbox>");
  result.xmin = Coordinate(*box, "xmin", where);
  result.ymin = Coordinate(*box, "ymin", where);
  result.xmax = Coordinate(*box, "xmax", where);
  result.ymax = Coordinate(*box, "ymax", where);
  CREMA_REQUIRE(result.xmin <= result.xmax && result.ymin <= result.ymax,
                where << " ('" << name << "'): the box (" << result.xmin << ", " << result.ymin
                      << ", " << result.xmax << ", " << result.ymax
                      << ") has a minimum above its maximum");
  const bool sized = annotation.width > 0 && annotation.height > 0;
  CREMA_REQUIRE(!sized || (result.xmin >= 0 && result.ymin >= 0 &&
                           result.xmax <= annotation.width && result.ymax <= annotation.height),
                where << " ('" << name << "'): the box (" << result.xmin << ", " << result.ymin
                      << ", " << result.xmax << ", " << result.ymax << ") leaves the "
                      << annotation.width << " x " << annotation.height << " image");
  return result;
}

VocAnnotation ReadVocAnnotationTree(const std::string& filename,
                                    const std::map<std::string, int>& labels) {
  const std::string text = ReadTextFile(filename);
  ptree tree;
  try {
    std::istringstream stream(text);
    boost::property_tree::read_xml(stream, tree);
  } catch (const boost::property_tree::xml_parser_error& error) {
    CREMA_FAIL(filename << ":" << error.line() << ": not well-formed XML (" << error.message()
                        << ")");
  }
  const ptree& whole = tree;
  const boost::optional<const ptree&> root = whole.get_child_optional("annotation");
  CREMA_REQUIRE(root.has_value(), filename << ": no <annotation> element");
  VocAnnotation annotation;
  annotation.width = root->get<int>("size.width", 0);
  annotation.height = root->get<int>("size.height", 0);
  int index = 0;
  for (const auto& child : *root) {
    if (child.first != "object") continue;
    ++index;
    const std::string where = filename + ": object " + std::to_string(index);
    annotation.objects.push_back(ReadObject(child.second, labels, annotation, where));
  }
  return annotation;
}

}  // namespace

VocAnnotation ReadVocAnnotation(const std::string& filename,
                                const std::map<std::string, int>& labels) {
  try {
    return ReadVocAnnotationTree(filename, labels);
  } catch (const boost::property_tree::ptree_error& error) {
    CREMA_FAIL(filename << ": " << error.what());  // a value of the wrong kind, say
  }
}

VocAnnotation ReadTextAnnotation(const std::string& filename,
                                 const std::map<std::string, int>& labels) {
  std::istringstream text(ReadTextFile(filename));
  VocAnnotation annotation;
  std::string line;
  for (int number = 1; std::getline(text, line); ++number) {
    std::istringstream fields(line);
    std::string name, extra;
    VocObject object;
    if (!(fields >> name)) continue;  // blank
    const std::string where = filename + ":" + std::to_string(number);
    CREMA_REQUIRE(
        fields >> object.xmin >> object.ymin >> object.xmax >> object.ymax && !(fields >> extra),
        where << ": expected 'name xmin ymin xmax ymax', got '" << line << "'");
    const auto label = labels.find(name);
    CREMA_REQUIRE(label != labels.end(),
                  where << ": the class '" << name << "' is not in the label map");
    object.label = label->second;
    CREMA_REQUIRE(object.xmin <= object.xmax && object.ymin <= object.ymax,
                  where << " ('" << name << "'): the box (" << object.xmin << ", " << object.ymin
                        << ", " << object.xmax << ", " << object.ymax
                        << ") has a minimum above its maximum");
    annotation.objects.push_back(object);
  }
  return annotation;
}

void RequireBoxesInside(const VocAnnotation& annotation, const std::string& filename) {
  for (size_t i = 0; i < annotation.objects.size(); ++i) {
    const VocObject& o = annotation.objects[i];
    CREMA_REQUIRE(
        o.xmin >= 0 && o.ymin >= 0 && o.xmax <= annotation.width && o.ymax <= annotation.height,
        filename << ": object " << i + 1 << ": the box (" << o.xmin << ", " << o.ymin << ", "
                 << o.xmax << ", " << o.ymax << ") leaves the " << annotation.width << " x "
                 << annotation.height << " image");
  }
}

void SetAnnotations(const VocAnnotation& annotation, int width, int height, AnnotatedDatum* datum) {
  datum->set_type(AnnotatedDatum::BBOX);
  datum->clear_annotation_group();
  std::map<int, std::vector<const VocObject*>> by_label;
  for (const VocObject& object : annotation.objects) by_label[object.label].push_back(&object);
  for (const auto& [label, objects] : by_label) {
    AnnotationGroup* group = datum->add_annotation_group();
    group->set_group_label(label);
    for (size_t i = 0; i < objects.size(); ++i) {
      Annotation* item = group->add_annotation();
      item->set_instance_id(static_cast<int>(i));
      NormalizedBBox* box = item->mutable_bbox();
      box->set_xmin(objects[i]->xmin / width);
      box->set_ymin(objects[i]->ymin / height);
      box->set_xmax(objects[i]->xmax / width);
      box->set_ymax(objects[i]->ymax / height);
      box->set_difficult(objects[i]->difficult);
    }
  }
}

}  // namespace ssd
}  // namespace crema
