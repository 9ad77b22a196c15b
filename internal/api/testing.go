package api

import (
	"net/http"

	"github.com/sniped/sniped/internal/clock"
)

type justTestingResponse struct {
	Status    string `json:"status"`
	Message   string `json:"message"`
	Arg1      string `json:"arg1"`
	Arg2      string `json:"arg2"`
	Arg3      string `json:"arg3"`
	Version   string `json:"version"`
	Timestamp string `json:"timestamp"`
}

// justTesting echoes its arguments so that a client can check its key and
// URL building.
func justTesting(s *server) operation {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		arg1, err := c.p.Required("arg1")
		if err != nil {
			return err
		}
		if err := echoArg("arg1", arg1); err != nil {
			return err
		}
		resp := justTestingResponse{Status: "OK", Arg1: arg1, Version: Version, Timestamp: clock.FormatUTC(s.clock.Now())}
		for _, a := range []struct {
			name string
			dst  *string
		}{{"arg2", &resp.Arg2}, {"arg3", &resp.Arg3}} {
			v, _, err := c.p.Raw(a.name)
			if err != nil {
				return err
			}
			if err := echoArg(a.name, v); err != nil {
				return err
			}
			*a.dst = v
		}
		resp.Message = "The interface works; your key belongs to account " + c.acct.Name + "."
		return ok(w, resp)
	}
}
