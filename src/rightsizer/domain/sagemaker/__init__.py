"""SageMaker analysis: usage summaries of endpoint variants, notebook instances and training jobs, the rules that
judge them (small functions in registries, as domain/rules/ does for EC2 hosts) and their recommendations.

Pure: no I/O. What SageMaker publishes, and how it is read here:
- Endpoint variants (`/aws/sagemaker/Endpoints`, dimensions EndpointName + VariantName): `GPUUtilization` and
  `GPUMemoryUtilization` are the *sum* over the instance's GPUs (0-100 % x GPUs; a 4-GPU instance reads up to
  400 %), `CPUUtilization` the sum over its vCPUs, `MemoryUtilization` 0-100 %; a variant's Average is the mean
  over its instances, its Maximum the busiest instance. Every figure people read is divided by the GPUs (vCPUs) of
  the type: *per GPU*, the mean of the instance's GPUs (one GPU at 100 % and three idle read 25 % per GPU: the
  split is not published). `AWS/SageMaker` `Invocations` (Sum) counts requests and has datapoints only for periods
  with requests; `ModelLatency` (microseconds) is read as hourly averages.
- Notebook instances publish no usage metrics of their own. Their GPU use is measured only where the owner's
  lifecycle configuration runs the CloudWatch agent with a `NotebookInstanceName` dimension (docs/resources.md);
  without it the evidence is what the API says: InService since LastModifiedTime, and the cost of that.
- Training jobs (`/aws/sagemaker/TrainingJobs`, dimension Host = <job>/algo-<n>): GPUUtilization summed per host.

The EC2 catalog gives each `ml.X` type's hardware (X's GPUs, memory, vCPUs); prices are SageMaker's own (hosting,
notebook, training), never EC2's: a type without a SageMaker price has none.

The modules, each reading only those before it: `prices` (SageMaker's price list of one component), `usage` (raw
series and their summaries), `advice` (a region's price book, the draft a rule assembles, the recommendation it
becomes), `endpoints`, `notebooks`, `training` (each kind's facts, gates and rules, none reading another), `fleet` (a
shard's resources and the analysis of them all); the `sagemaker` import contract in pyproject.toml holds that order.
What a resource is (its API description) is domain/sagemaker_models.py, which domain/models/advice.py reads for a
recommendation's detail.
"""
