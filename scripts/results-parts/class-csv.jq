# class-csv.jq: class.csv (scripts/results class), from the class's figures
# (class.jq): a line per student, their points in each lab, their total,
# the most points there were, whether they were graded, and the seconds
# their builds and tests took. An ungradable student has no points; one
# graded without the whole sandbox (--unsafe) has the status "unsafe".
.top as $top
| (["student"] + (.labs | map("lab\(.)")) + ["total", "max", "status", "seconds"] | @csv),
  (.students[]
   | [.name] + (if .graded then .got + [.total] else .got + [.total] | map(null) end)
     + [$top, .status, .seconds]
   | @csv)
