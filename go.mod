module github.com/sniped/sniped

go 1.26.0
