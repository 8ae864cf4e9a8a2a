# Publishes what GPU Rightsizer reads on a Windows GPU host, under the names and dimensions the CloudWatch agent's
# nvidia_gpu section uses on Linux (it does not run on Windows): per GPU nvidia_smi_utilization_gpu,
# nvidia_smi_memory_used, nvidia_smi_memory_total, nvidia_smi_encoder_stats_session_count and
# nvidia_smi_encoder_stats_average_fps (dimensions InstanceId, InstanceType, index, name), and the host's
# mem_used_percent (InstanceId, InstanceType), in namespace CWAgent. Run it every minute as a scheduled task
# (agent/windows/README.md). Needs the NVIDIA driver (nvidia-smi), the AWS CLI v2 and an instance role that may
# call cloudwatch:PutMetricData (CloudWatchAgentServerPolicy does).
$ErrorActionPreference = 'Stop'
$Namespace = 'CWAgent'
$Smi = Join-Path $env:ProgramFiles 'NVIDIA Corporation\NVSMI\nvidia-smi.exe'
if (-not (Test-Path $Smi)) { $Smi = 'nvidia-smi.exe' }  # newer drivers install it in System32

# The instance's identity from the instance metadata service (IMDSv2).
$Token = Invoke-RestMethod -Method Put -Uri 'http://169.254.169.254/latest/api/token' `
    -Headers @{ 'X-aws-ec2-metadata-token-ttl-seconds' = '300' }
$Meta = @{ 'X-aws-ec2-metadata-token' = $Token }
$InstanceId = Invoke-RestMethod -Headers $Meta -Uri 'http://169.254.169.254/latest/meta-data/instance-id'
$InstanceType = Invoke-RestMethod -Headers $Meta -Uri 'http://169.254.169.254/latest/meta-data/instance-type'
$Region = Invoke-RestMethod -Headers $Meta -Uri 'http://169.254.169.254/latest/meta-data/placement/region'

$Fields = 'index,name,utilization.gpu,memory.used,memory.total,encoder.stats.sessionCount,encoder.stats.averageFps'
$Names = @{
    'utilization.gpu' = 'nvidia_smi_utilization_gpu'
    'memory.used' = 'nvidia_smi_memory_used'
    'memory.total' = 'nvidia_smi_memory_total'
    'encoder.stats.sessionCount' = 'nvidia_smi_encoder_stats_session_count'
    'encoder.stats.averageFps' = 'nvidia_smi_encoder_stats_average_fps'
}
$Data = @()
foreach ($Line in & $Smi "--query-gpu=$Fields" '--format=csv,noheader,nounits') {
    $Values = $Line.Split(',') | ForEach-Object { $_.Trim() }
    $Dimensions = "InstanceId=$InstanceId,InstanceType=$InstanceType,index=$($Values[0]),name=$($Values[1])"
    $Columns = $Fields.Split(',')
    for ($i = 2; $i -lt $Columns.Count; $i++) {
        if ($Values[$i] -match '^[0-9.]+$') {  # [N/A] (MIG mode, no encoder) is left out, as the agent does
            $Data += "MetricName=$($Names[$Columns[$i]]),Dimensions=[$Dimensions],Value=$($Values[$i]),Unit=None"
        }
    }
}
$Os = Get-CimInstance Win32_OperatingSystem
$UsedPercent = 100 * (1 - $Os.FreePhysicalMemory / $Os.TotalVisibleMemorySize)
$Data += "MetricName=mem_used_percent,Dimensions=[InstanceId=$InstanceId,InstanceType=$InstanceType]," +
    "Value=$([math]::Round($UsedPercent, 2)),Unit=Percent"

# PutMetricData takes up to 1,000 values a call: an 8-GPU host sends 41.
aws cloudwatch put-metric-data --region $Region --namespace $Namespace --metric-data $Data
