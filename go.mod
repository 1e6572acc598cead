module github.com/respire-go/respire

go 1.26

require github.com/stretchr/testify v1.12.1

require (
	github.com/dave/jennifer v1.7.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
