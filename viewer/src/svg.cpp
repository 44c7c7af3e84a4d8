// arenascope viewer: the report's SVG; see svg.h.
#include "svg.h"

namespace arenascope {

float report_measure(const std::string &s)
{
    std::size_t n = 0;
    for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;  // UTF-8 code points
    return kReportCharW * float(n);
}

}  // namespace arenascope
