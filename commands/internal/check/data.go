package check

// Data is data of `check --json`: the findings' counts per severity, --fail-on and --deep.
type Data struct {
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
	Info     int    `json:"info"`
	FailOn   string `json:"fail_on"`
	Deep     bool   `json:"deep"`
}

// NewData counts findings for `check --json`.
func NewData(findings []Finding, failOn FailOn, deep bool) Data {
	d := Data{FailOn: string(failOn), Deep: deep}
	for _, f := range findings {
		switch f.Severity {
		case Error:
			d.Errors++
		case Warn:
			d.Warnings++
		default:
			d.Info++
		}
	}
	return d
}
